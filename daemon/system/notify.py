"""sd_notify for the daemon: tell systemd the truth about start-up, health, reload and stop.

The unit is Type=notify with NotifyAccess=main, so only the daemon's main process may speak: systemd considers
the service started on READY=1, restarts it when WATCHDOG=1 stops arriving, and shows STATUS= in
`systemctl status`. Outside systemd (no NOTIFY_SOCKET) every call is a silent no-op, so the daemon calls these
unconditionally.

The daemon's Notifier (built from the process environment) sends through systemd-python's `sd_notify`. A
Notifier given an explicit environment mapping, or one in a venv without systemd-python, sends the same
datagram itself: one AF_UNIX datagram of newline-separated KEY=VALUE assignments (sd_notify(3)); a path
starting with '@' names an abstract socket.
A failed send never raises: losing a notification must not take the daemon down (systemd's watchdog still
catches a daemon that truly stopped talking).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping

NOTIFY_VARIABLES = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a worker process: without the notify variables.

    Workers must never notify (NotifyAccess=main would reject them and log a warning each time), and a worker
    must not think the watchdog is its business.
    """
    source = os.environ if env is None else env
    return {key: value for key, value in source.items() if key not in NOTIFY_VARIABLES}


def _socket_address(value: str) -> str | bytes | None:
    """Where NOTIFY_SOCKET points, in the form socket.sendto takes; None if it is not an AF_UNIX address."""
    if value.startswith("/"):
        return value
    if value.startswith("@") and len(value) > 1:
        return b"\0" + value[1:].encode()
    return None


def _watchdog_interval_s(env: Mapping[str, str]) -> float | None:
    """Half of WATCHDOG_USEC, as sd_watchdog_enabled(3) advises, when the watchdog is meant for this process."""
    owner = env.get("WATCHDOG_PID")
    if owner is not None and owner.strip() != str(os.getpid()):
        return None
    try:
        timeout_us = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if timeout_us <= 0:
        return None
    return timeout_us / 2 / 1_000_000


def _libsystemd_notify() -> Callable[[str], bool] | None:
    """systemd-python's sd_notify, which reads NOTIFY_SOCKET from this process's environment."""
    try:
        from systemd import daemon
    except ImportError:
        return None
    return daemon.notify


def _one_line(text: str) -> str:
    """STATUS= ends at a newline: a multi-line status would be cut or read as further assignments."""
    return " ".join(text.split())


class Notifier:
    """sd_notify for the daemon; silently off outside systemd (no NOTIFY_SOCKET)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        source = os.environ if env is None else env
        self._libsystemd = _libsystemd_notify() if env is None else None
        self._address = _socket_address(source.get("NOTIFY_SOCKET", ""))
        self.enabled: bool = self._address is not None
        self.watchdog_interval_s: float | None = _watchdog_interval_s(source) if self.enabled else None
        self.last_error: str | None = None
        self._last_status: str | None = None
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None

    def ready(self, status: str) -> None:
        """Start-up is complete: every enabled plugin is warmed up and answering."""
        self._send_with_status("READY=1", status)

    def status(self, text: str) -> None:
        """A one-line human summary for `systemctl status`; repeats are skipped to keep the socket quiet."""
        line = _one_line(text)
        with self._lock:
            if line == self._last_status:
                return
        self._send_with_status(None, line)

    def watchdog(self) -> None:
        """The daemon's heartbeat through its workers is healthy right now."""
        self._send("WATCHDOG=1")

    def reloading(self) -> None:
        """A reload began; MONOTONIC_USEC lets systemd tell this reload from an earlier one."""
        now_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        self._send(f"RELOADING=1\nMONOTONIC_USEC={now_us}")

    def ready_after_reload(self, status: str) -> None:
        """The reload finished and the daemon serves again."""
        self._send_with_status("READY=1", status)

    def stopping(self) -> None:
        """Shutdown began: systemd shows 'deactivating' instead of suspecting a hang."""
        self._send("STOPPING=1")

    def extend_timeout(self, seconds: float) -> None:
        """Ask for `seconds` more before the start (or stop) timeout fires, e.g. during a TensorRT engine build.

        systemd counts from the moment the message arrives, so call again before the extension runs out.
        """
        if not seconds > 0:
            raise ValueError(f"extend_timeout needs a positive number of seconds, got {seconds!r}")
        self._send(f"EXTEND_TIMEOUT_USEC={round(seconds * 1_000_000)}")

    def close(self) -> None:
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None

    def _send_with_status(self, head: str | None, status: str) -> None:
        line = _one_line(status)
        with self._lock:
            self._last_status = line
        self._send("\n".join(part for part in (head, f"STATUS={line}") if part))

    def _send(self, message: str) -> None:
        if self._address is None:
            return
        with self._lock:
            if self._libsystemd is not None:
                sent = self._libsystemd(message)
                self.last_error = None if sent else f"sd_notify to {self._address!r} failed"
                return
            try:
                if self._socket is None:
                    self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._socket.sendto(message.encode(), self._address)
                self.last_error = None
            except OSError as exc:
                self.last_error = f"sd_notify to {self._address!r} failed: {exc}"
