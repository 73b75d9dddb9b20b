"""Apply a profile's power mode by name, off the daemon's loop (nvpmodel takes a while), and say what happened.

On a box without nvpmodel (not a Jetson) a profile's power mode is not applicable and says so; a
mode that needs a reboot is reported and left alone; otherwise the root helper switches it.
"""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any

import structlog

from tcccd.telemetry.nvpmodel import PowerModeError, ask_helper, current_mode, load_modes


def plan(root: Path, name: str) -> dict[str, Any]:
    """What switching to `name` would do here: {'state': 'apply'|'current'|'needs_reboot'|'unknown'|'no_nvpmodel'}."""
    modes = load_modes(root)
    if modes is None:
        return {"requested": name, "state": "no_nvpmodel", "detail": "no /etc/nvpmodel.conf: not a Jetson"}
    running = current_mode(root, modes)
    base = {"requested": name, "current": running.name if running else None}
    try:
        target = modes.by_name(name)
    except PowerModeError as exc:
        return {**base, "state": "unknown", "detail": str(exc)}
    if running is not None and running.id == target.id:
        return {**base, "state": "current"}
    if modes.needs_reboot(target, running):
        return {**base, "state": "needs_reboot", "detail": f"{name} changes the GPU's TPC mask: applies only at boot"}
    return {**base, "state": "apply"}


class PowerModeSwitcher:
    """One switch at a time in a worker thread; `status()` tells the latest outcome."""

    def __init__(self, root: Path, socket_path: str) -> None:
        self.root = root
        self.socket_path = socket_path
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nvpmodel")
        self.last: dict[str, Any] = {}
        self.log = structlog.get_logger()

    def request(self, name: str | None) -> None:
        if name is None:
            return
        step = plan(self.root, name)
        self.last = step
        if step["state"] == "apply":
            self.last = {**step, "state": "switching"}
            self.pool.submit(self._switch, name)
        elif step["state"] in ("needs_reboot", "unknown"):
            self.log.warning("power mode not applied", **step)

    def _switch(self, name: str) -> None:
        try:
            answer = ask_helper(self.socket_path, name)
        except PowerModeError as exc:
            answer = {"ok": False, "error": str(exc)}
        self.last = {**plan(self.root, name), "state": "applied" if answer.get("ok") else "failed",
                     "detail": answer.get("error")}
        (self.log.info if answer.get("ok") else self.log.warning)("power mode switch", **self.last)

    def status(self) -> dict[str, Any]:
        modes = load_modes(self.root)
        running = current_mode(self.root, modes) if modes else None
        return {"current": running.name if running else None, **{k: v for k, v in self.last.items() if k != "current"}}

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
