"""The memory capper: reads, decides, acts through the daemon, and says what it did.

Once per `interval_s` it reads the host (meminfo, PSI, cgroup) and each
worker's PSS, adds what workers report their GPU allocator holds, runs the
policy (tcccd.memory.policy) and carries out the decision through the
`CapperActions` the daemon gives it. Every action is logged, told to the daemon
(`acted`, which publishes it as an alert) and kept for status.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psutil
import structlog

from tcccd.memory import policy, readers
from tcccd.memory.budget import Budget, MemorySettings, next_profile_down, resolve_budget, worker_shares
from tcccd.wire.status_memory import CapperAction


class CapperActions(Protocol):
    """What the capper may ask of the daemon. Each returns False when it could not be done now."""

    def release(self, workers: tuple[str, ...]) -> bool: ...

    def unload(self, worker: str) -> bool: ...

    def step_down(self, profile: str, reason: str) -> bool: ...

    def set_refusing(self, refusing: bool, reason: str) -> bool: ...

    def acted(self, action: CapperAction) -> None:
        """What the capper did, once done: for the operator."""


@dataclass(frozen=True)
class WorkerSample:
    """One worker as the daemon knows it. pid None: not running (unloaded, restarting)."""

    name: str
    pid: int | None
    idle_s: float | None
    rss_bytes: int | None = None  # from its heartbeat: used where smaps_rollup cannot be read
    gpu_bytes: int | None = None


@dataclass(frozen=True)
class _Measured:
    sample: WorkerSample
    pss_bytes: int | None
    used_bytes: int


class Capper:
    def __init__(self, settings: MemorySettings, host_root: Path, actions: CapperActions) -> None:
        self.settings = settings
        self.host_root = host_root
        self.actions = actions
        self.log = structlog.get_logger()
        self.state = policy.CapperState()
        self.next_at = 0.0
        self.last_action: dict[str, Any] | None = None
        self.report: dict[str, Any] = {"enabled": settings.enabled}

    def configure(self, settings: MemorySettings) -> None:
        """New settings (a profile switch or a reload): the budget follows from the next tick on."""
        self.settings = settings
        self.next_at = 0.0

    def tick(self, now: float, workers: list[WorkerSample], profile: str,
             profiles: list[str]) -> policy.Decision | None:
        """Read and decide at most once per interval_s; returns the action carried out, if any."""
        if now < self.next_at:
            return None
        self.next_at = now + self.settings.interval_s
        readings = self.read(workers, profile, profiles)
        if not self.settings.enabled:
            return None
        decision = policy.decide(readings, self.state, self.settings, now)
        if decision is None or not self._carry_out(decision):
            return None
        policy.record(decision, self.state, readings, now)
        self._announce(decision, readings)
        return decision

    def read(self, workers: list[WorkerSample], profile: str, profiles: list[str]) -> policy.Readings:
        """Every figure the policy needs, and the status report as a side product."""
        meminfo = readers.read_meminfo(self.host_root)
        cgroup = readers.read_cgroup(self.host_root)
        pressure = readers.read_pressure(self.host_root)
        total_ram = meminfo.total_bytes if meminfo else psutil.virtual_memory().total
        budget = resolve_budget(self.settings, total_ram, cgroup.limit_bytes if cgroup else None)
        daemon_bytes = self._own_bytes()
        measured = [self._measure(w) for w in workers]
        used = daemon_bytes + sum(m.used_bytes for m in measured)
        shares = worker_shares(self.settings, [w.name for w in workers], budget.bytes, daemon_bytes)
        uses = tuple(policy.WorkerUse(m.sample.name, m.used_bytes, shares[m.sample.name], m.sample.idle_s,
                                      loaded=m.sample.pid is not None) for m in measured)
        readings = policy.Readings(
            budget.bytes, used, uses, total_ram, meminfo.available_bytes if meminfo else None,
            pressure.some_avg10 if pressure else None, next_profile_down(self.settings, profile, profiles))
        self.report = self._status(budget, readings, measured, daemon_bytes, meminfo, cgroup, pressure)
        return readings

    def _own_bytes(self) -> int:
        own = readers.read_process(self.host_root, os.getpid())
        return own.pss_bytes if own else psutil.Process().memory_info().rss

    def _measure(self, sample: WorkerSample) -> _Measured:
        if sample.pid is None:
            return _Measured(sample, None, 0)
        proc = readers.read_process(self.host_root, sample.pid)
        cpu_bytes = proc.pss_bytes if proc else (sample.rss_bytes or 0)
        return _Measured(sample, proc.pss_bytes if proc else None, cpu_bytes + (sample.gpu_bytes or 0))

    def _carry_out(self, decision: policy.Decision) -> bool:
        if decision.action == "release":
            return self.actions.release(decision.targets)
        if decision.action == "unload":
            return self.actions.unload(decision.targets[0])
        if decision.action == "step_down":
            return self.actions.step_down(decision.targets[0], f"memory: {decision.reason}")
        return self.actions.set_refusing(decision.action == "refuse", decision.reason)

    def _announce(self, decision: policy.Decision, readings: policy.Readings) -> None:
        self.last_action = {"action": decision.action, "targets": list(decision.targets), "reason": decision.reason,
                            "ts": time.time(), "used_bytes": readings.used_bytes,
                            "budget_bytes": readings.budget_bytes}
        self.report["last_action"] = self.last_action
        self.report["refusing"] = self.state.refusing
        level = "info" if decision.action in ("release", "resume") else "warning"
        getattr(self.log, level)("memory capper acted", **self.last_action)
        self.actions.acted(CapperAction.from_data(self.last_action))

    def _status(self, budget: Budget, readings: policy.Readings, measured: list[_Measured], daemon_bytes: int,
                meminfo: readers.MemInfo | None, cgroup: readers.CgroupMemory | None,
                pressure: readers.Pressure | None) -> dict[str, Any]:
        workers = {m.sample.name: {"pss_bytes": m.pss_bytes, "rss_bytes": m.sample.rss_bytes if m.sample.pid else None,
                                   "gpu_bytes": m.sample.gpu_bytes, "used_bytes": m.used_bytes,
                                   "share_bytes": u.share_bytes, "loaded": u.loaded, "idle_s": u.idle_s}
                   for m, u in zip(measured, readings.workers, strict=True)}
        return {
            "enabled": self.settings.enabled, "budget_bytes": budget.bytes, "budget_source": budget.source,
            "used_bytes": readings.used_bytes, "headroom_bytes": budget.bytes - readings.used_bytes,
            "daemon_bytes": daemon_bytes, "over_budget": policy.over_budget(readings, self.settings),
            "refusing": self.state.refusing, "last_action": self.last_action, "workers": workers,
            "host": {
                "total_bytes": readings.total_ram_bytes, "available_bytes": readings.available_bytes,
                "nvmap_used_bytes": meminfo.nvmap_used_bytes if meminfo else None,
                "pressure_some_avg10": pressure.some_avg10 if pressure else None,
                "pressure_full_avg10": pressure.full_avg10 if pressure else None,
                "cgroup": None if cgroup is None else {"version": cgroup.version, "current_bytes": cgroup.current_bytes,
                                                       "limit_bytes": cgroup.limit_bytes,
                                                       "working_set_bytes": cgroup.working_set_bytes},
            },
        }
