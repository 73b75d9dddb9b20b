"""Switching the performance profile: validated first, applied to every worker, or to none.

`ProfileSwitcher.switch(name, reason, done)` is the one way a profile changes,
whoever asks: a client (`profile.set`), or a policy inside the daemon (the
telemetry policy of issue 12 calls it when the battery runs low). It returns at
once with a `SwitchResult`: refused (with the reason), applied (nothing had to
change in any worker), or pending while the workers apply it; `done` is called
with the outcome in every case.

The name must be one of the installed profiles (never a path). Every plugin's
Params validate the merged parameters before anything is sent. Each worker
applies the profile to all its stages or to none; when any worker refuses, the
workers that took it get their previous parameters back and the switch ends in
`bad_profile`. Only an accepted switch is committed to the supervisor, so a
worker restarted later starts with parameters that were proven to work.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from tcccd import config as cfg
from tcccd.core.supervisor import Supervisor
from tcccd.core.workers import WorkerHandle
from tcccd.wire.messages import PROFILE_NAME
from tcccd.wire.protocol import Message
from tcccd.wire.states import COMING_UP

APPLY_TIMEOUT_S = 30.0


@dataclass
class SwitchResult:
    state: str  # "applied", "pending", "refused"
    code: str | None = None
    message: str = ""
    profile: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Transaction:
    txn: str
    name: str
    reason: str
    new: dict[str, dict[str, Any]]
    old: dict[str, dict[str, Any]]
    waiting: set[str]
    started_at: float
    done: Callable[[SwitchResult], None]
    applied: set[str] = field(default_factory=set)
    errors: dict[str, str] = field(default_factory=dict)


class ProfileSwitcher:
    def __init__(self, config: cfg.Config, supervisor: Supervisor,
                 announce: Callable[[dict[str, Any]], None]) -> None:
        self.config = config
        self.supervisor = supervisor
        self.announce = announce
        self.current = {"name": config.profile, "reason": "set in the config", "since": time.time()}
        self.pending: _Transaction | None = None
        self._txns = itertools.count(1)
        self.log = structlog.get_logger()

    def info(self) -> dict[str, Any]:
        return {**self.current, "available": cfg.available_profiles(self.config)}

    def reset(self, config: cfg.Config, reason: str) -> None:
        """A reloaded config sets the profile again."""
        self.config = config
        self.current = {"name": config.profile, "reason": reason, "since": time.time()}

    def switch(self, name: str, reason: str, done: Callable[[SwitchResult], None] | None = None) -> SwitchResult:
        notify = done or (lambda _result: None)
        refusal = self._refusal(name)
        if refusal is not None:
            result = SwitchResult("refused", *refusal)
            notify(result)
            return result
        profile = cfg.load_profile(self.config, name)
        new = {s.config.name: cfg.stage_params(self.config, s.config, profile) for s in self.supervisor.stages.values()}
        old = {n: s.params for n, s in self.supervisor.stages.items()}
        txn = _Transaction(f"p{next(self._txns)}", name, reason, new, old, set(), time.monotonic(), notify)
        for handle in self.supervisor.workers.values():
            if handle.alive and any(new[s.config.name] != old[s.config.name] for s in handle.stages):
                txn.waiting.add(handle.name)
                self._send(handle, txn, new)
        self.pending = txn
        if not txn.waiting:
            return self._finish(txn)
        return SwitchResult("pending", profile=self.info())

    def _refusal(self, name: str) -> tuple[str, str] | None:
        available = cfg.available_profiles(self.config)
        if not isinstance(name, str) or not re.fullmatch(PROFILE_NAME, name) or name not in available:
            return "bad_profile", f"profile {name!r} is not installed (available: {', '.join(available) or 'none'})"
        if self.pending is not None:
            return "busy", f"a switch to profile {self.pending.name!r} is still being applied; retry in a moment"
        starting = [h.name for h in self.supervisor.workers.values() if h.alive and h.state in COMING_UP]
        if starting:  # it may not be connected yet: a switch sent now would be lost, and time out
            return "busy", f"worker {', '.join(starting)} is still starting; retry once it is ready"
        try:
            profile = cfg.load_profile(self.config, name)
        except cfg.ConfigError as exc:
            return "bad_profile", str(exc)
        problems = cfg.validate_stages(self.config, profile, name)
        return ("bad_profile", "; ".join(problems)) if problems else None

    def _send(self, handle: WorkerHandle, txn: _Transaction, params: dict[str, dict[str, Any]]) -> None:
        mine = {s.config.name: params[s.config.name] for s in handle.stages}
        profile = txn.name if params is txn.new else self.current["name"]
        self.supervisor.links.send(handle, Message("profile", data={"profile": profile, "params": mine,
                                                                      "txn": txn.txn}))

    def on_applied(self, handle: WorkerHandle, message: Message) -> None:
        """A worker's `profile_applied`: collect it; when every worker answered, commit or roll back."""
        txn = self.pending
        if txn is None or message.data.get("txn") != txn.txn or handle.name not in txn.waiting:
            return  # the answer to a rollback, or to a transaction that already timed out
        txn.waiting.discard(handle.name)
        if message.data.get("errors"):
            txn.errors.update(message.data["errors"])
        else:
            txn.applied.add(handle.name)
        if not txn.waiting:
            self._finish(txn)

    def worker_lost(self, handle: WorkerHandle) -> None:
        """A worker that dies mid-switch restarts with the committed (old) parameters: count it as a refusal."""
        txn = self.pending
        if txn is not None and handle.name in txn.waiting:
            txn.waiting.discard(handle.name)
            txn.errors[handle.name] = f"worker {handle.name!r} stopped while applying the profile"
            if not txn.waiting:
                self._finish(txn)

    def tick(self, now: float) -> None:
        txn = self.pending
        if txn is not None and now - txn.started_at > APPLY_TIMEOUT_S:
            for name in txn.waiting:
                txn.errors[name] = f"worker {name!r} did not confirm within {APPLY_TIMEOUT_S:g} s"
            txn.applied |= txn.waiting  # it may still apply it: roll it back too
            txn.waiting.clear()
            self._finish(txn)

    def _finish(self, txn: _Transaction) -> SwitchResult:
        self.pending = None
        if txn.errors:
            for name in txn.applied:
                self._send(self.supervisor.workers[name], txn, txn.old)
            text = "; ".join(txn.errors.values())
            self.log.error("profile switch rolled back", profile=txn.name, errors=txn.errors)
            result = SwitchResult("refused", "bad_profile", f"profile {txn.name!r} was refused and rolled back, "
                                                            f"{self.current['name']!r} stays: {text}", self.info())
        else:
            self.supervisor.commit_params(txn.new, txn.name)
            self.current = {"name": txn.name, "reason": txn.reason, "since": time.time()}
            structlog.contextvars.bind_contextvars(profile=txn.name)
            self.log.info("profile switched", reason=txn.reason)
            result = SwitchResult("applied", profile=self.info())
            self.announce(result.profile)
        txn.done(result)
        return result
