"""The capper wired into the daemon: what it reads there, and how its actions are carried out.

The daemon runs `tick` from its loop (`Daemon.every(0, ...)`). Each tick
keeps every worker's idle clock (a worker is busy while anything is queued
for its stages, an open request routes through them, or its heartbeat says
so); the capper itself reads and decides once per `memory.interval_s`.

Actions: `release` is a control message the worker answers with `released`
(what it freed); `unload` stops an idle worker through the supervisor, which
starts it again on the next request for it while the broker holds that
request (within its deadline); `step_down` is an ordinary profile switch;
`refuse` makes `admission` answer new requests with `busy`, reason `memory`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from tcccd.governor.profiles import ProfileBook
from tcccd.governor.switch import ProfileSwitcher
from tcccd.governor.telemetry_hook import ProfileGovernor
from tcccd.governor.workers import OpenRequests, WorkerHands, WorkerRecords
from tcccd.memory.budget import MIB, MemorySettings
from tcccd.memory.capper import Capper, WorkerSample
from tcccd.ports import ConfigSource, Publisher
from tcccd.telemetry.readings import host_root
from tcccd.wire.alerts import MemoryAlert
from tcccd.wire.control import Release, Released
from tcccd.wire.protocol import Message
from tcccd.wire.states import SERVING
from tcccd.wire.status_memory import CapperAction

if TYPE_CHECKING:
    from tcccd.core.workers import WorkerHandle


class MemoryHook:
    def __init__(self, config: ConfigSource, book: ProfileBook, roster: WorkerRecords, supervisor: WorkerHands,
                 requests: OpenRequests, profiles: ProfileSwitcher, governor: ProfileGovernor,
                 events: Publisher) -> None:
        self.config = config
        self.book = book
        self.roster = roster
        self.supervisor = supervisor
        self.requests = requests
        self.profiles = profiles
        self.governor = governor
        self.events = events
        self.log = structlog.get_logger()
        self.profile = profiles.name()
        self.idle_since: dict[str, float] = {}
        self.refusing: str | None = None
        self.released: dict[str, dict[str, Any]] = {}
        self.capper = Capper(self.settings(self.profile), host_root(config.current().daemon.host_root), self)

    def settings(self, profile: str) -> MemorySettings:
        """The daemon's memory settings with the profile's override laid over them."""
        return self.config.current().daemon.memory.with_override(self.book.load(profile).memory)

    def tick(self, now: float) -> None:
        profile = self.profiles.name()
        if profile != self.profile:
            self.profile = profile
            self.capper.configure(self.settings(profile))
            self.log.info("memory budget follows the profile", budget=self.capper.settings.budget_mb,
                          budget_percent=self.capper.settings.budget_percent)
        samples = [self._sample(handle, now) for handle in self.roster.handles()]
        if now >= self.capper.next_at:
            self.capper.tick(now, samples, profile, self.book.available())

    def _busy(self, handle: WorkerHandle) -> bool:
        names = {s.config.name for s in handle.stages}
        return (any(s.pending for s in handle.stages) or bool(handle.info.get("busy"))
                or bool(names & self.requests.stages_in_use()))

    def _sample(self, handle: WorkerHandle, now: float) -> WorkerSample:
        serving = handle.alive and handle.state in SERVING
        if not serving or self._busy(handle):
            self.idle_since[handle.name] = now
        idle_s = now - self.idle_since.setdefault(handle.name, now)
        return WorkerSample(handle.name, handle.proc.pid if handle.alive and handle.proc else None,
                            idle_s if serving and idle_s > 0 else None,
                            handle.info.get("rss_bytes"), handle.info.get("gpu_bytes"))

    # -- CapperActions -----------------------------------------------------------------------------------------

    def release(self, workers: tuple[str, ...]) -> bool:
        for name in workers:
            self.supervisor.send_control(self.roster.handle(name), Release())
        return bool(workers)

    def unload(self, worker: str) -> bool:
        handle = self.roster.handle(worker)
        if self._busy(handle):  # work arrived since the readings: it stays
            return False
        return self.supervisor.unload(handle)

    def step_down(self, profile: str, reason: str) -> bool:
        return self.governor.step_down(profile, reason)

    def set_refusing(self, refusing: bool, reason: str) -> bool:
        self.refusing = reason if refusing else None
        return True

    # -- what the rest of the daemon asks ----------------------------------------------------------------------

    def admission(self) -> tuple[str, str, dict[str, Any]] | None:
        """While refusing: the `busy` error for a new request (code, text, extra data); accepted ones go on."""
        if self.refusing is None:
            return None
        return "busy", f"tcccd is over its memory budget and takes no new work: {self.refusing}; retry later", \
            {"reason": "memory"}

    def acted(self, action: CapperAction) -> None:
        text = f"memory capper: {action.action} {', '.join(action.targets)}: {action.reason}"
        self.events.publish("alert", Message.event(MemoryAlert(message=text, **action.model_dump())))

    def on_released(self, handle: WorkerHandle, released: Released) -> None:
        """A worker's answer to `release`: what it freed, kept for status and logged."""
        self.released[handle.name] = released.model_dump()
        self.log.info("worker released memory", worker=handle.name, freed_mb=round(released.freed_bytes / MIB, 1),
                      errors=released.errors)

    def report(self) -> dict[str, Any]:
        """`memory` in status: budget, use, headroom, what the capper last did, per-worker figures."""
        report = dict(self.capper.report)
        report["refusing"] = self.refusing
        for name, released in self.released.items():
            report.setdefault("workers", {}).setdefault(name, {})["last_release"] = released
        return report
