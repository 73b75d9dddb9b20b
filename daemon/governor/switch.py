"""Switching the performance profile: validated first, applied to every worker, or to none.

`ProfileSwitcher.switch(name, reason, done)` is the one way a profile changes,
whoever asks: a client (`profile.set`, through the governor), or a policy inside the
daemon (the telemetry policy when the battery runs low, the memory capper). It returns at
once with a `SwitchResult`: refused (with the reason), applied (nothing had to
change in any worker), or pending while the workers apply it; `done` is called
with the outcome in every case.

The name must be one of the installed profiles (never a path). Every plugin's
Params validate the merged parameters before anything is sent. Each worker
applies the profile to all its stages or to none; when any worker refuses, the
workers that took it get their previous parameters back and the switch ends in
`bad_profile`. Only an accepted switch is committed to the supervisor, so a
worker restarted later starts with parameters that were proven to work. The
switcher is also the running profile's source (tcccd.ports.RunningProfile), and an
applied switch is announced on the `profile` topic.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from tcccd import config as cfg
from tcccd.governor.profiles import ProfileBook
from tcccd.governor.workers import WorkerHands, WorkerRecords
from tcccd.ports import ConfigSource, Publisher
from tcccd.wire.control import ApplyProfile, ProfileApplied
from tcccd.wire.messages import PROFILE_NAME
from tcccd.wire.protocol import Message
from tcccd.wire.replies import ProfileReply
from tcccd.wire.states import COMING_UP

if TYPE_CHECKING:
    from tcccd.core.workers import WorkerHandle

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
    def __init__(self, config: ConfigSource, book: ProfileBook, roster: WorkerRecords, supervisor: WorkerHands,
                 events: Publisher) -> None:
        self.config = config
        self.book = book
        self.roster = roster
        self.supervisor = supervisor
        self.events = events
        self.current = {"name": config.current().profile, "reason": "set in the config", "since": time.time()}
        self.pending: _Transaction | None = None
        self._txns = itertools.count(1)
        self.log = structlog.get_logger()

    def info(self) -> dict[str, Any]:
        return {**self.current, "available": self.book.available()}

    def name(self) -> str:
        return self.current["name"]

    def settings(self) -> cfg.ProfileFile:
        """The running profile's settings (it was validated when it was applied)."""
        return self.book.load(self.current["name"])

    def reset(self, reason: str) -> None:
        """A reloaded config sets the profile again."""
        self.current = {"name": self.config.current().profile, "reason": reason, "since": time.time()}

    def switch(self, name: str, reason: str, done: Callable[[SwitchResult], None] | None = None) -> SwitchResult:
        notify = done or (lambda _result: None)
        refusal = self._refusal(name)
        if refusal is not None:
            result = SwitchResult("refused", *refusal)
            notify(result)
            return result
        config, profile = self.config.current(), self.book.load(name)
        new = {stage.name: cfg.stage_params(config, stage, profile) for stage in self.roster.stage_configs()}
        old = self.roster.stage_params()
        txn = _Transaction(f"p{next(self._txns)}", name, reason, new, old, set(), time.monotonic(), notify)
        for handle in self.roster.handles():
            if handle.alive and any(new[s.config.name] != old[s.config.name] for s in handle.stages):
                txn.waiting.add(handle.name)
                self._send(handle, txn, new)
        self.pending = txn
        if not txn.waiting:
            return self._finish(txn)
        return SwitchResult("pending", profile=self.info())

    def _refusal(self, name: str) -> tuple[str, str] | None:
        available = self.book.available()
        if not isinstance(name, str) or not re.fullmatch(PROFILE_NAME, name) or name not in available:
            return "bad_profile", f"profile {name!r} is not installed (available: {', '.join(available) or 'none'})"
        if self.pending is not None:
            return "busy", f"a switch to profile {self.pending.name!r} is still being applied; retry in a moment"
        starting = [h.name for h in self.roster.handles() if h.alive and h.state in COMING_UP]
        if starting:  # it may not be connected yet: a switch sent now would be lost, and time out
            return "busy", f"worker {', '.join(starting)} is still starting; retry once it is ready"
        try:
            profile = self.book.load(name)
        except cfg.ConfigError as exc:
            return "bad_profile", str(exc)
        problems = cfg.validate_stages(self.config.current(), profile, name)
        return ("bad_profile", "; ".join(problems)) if problems else None

    def _send(self, handle: WorkerHandle, txn: _Transaction, params: dict[str, dict[str, Any]]) -> None:
        mine = {s.config.name: params[s.config.name] for s in handle.stages}
        profile = txn.name if params is txn.new else self.current["name"]
        self.supervisor.send_control(handle, ApplyProfile(profile=profile, params=mine, txn=txn.txn))

    def on_applied(self, handle: WorkerHandle, applied: ProfileApplied) -> None:
        """A worker's `profile_applied`: collect it; when every worker answered, commit or roll back."""
        txn = self.pending
        if txn is None or applied.txn != txn.txn or handle.name not in txn.waiting:
            return  # the answer to a rollback, or to a transaction that already timed out
        txn.waiting.discard(handle.name)
        if applied.errors:
            txn.errors.update(applied.errors)
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
                self._send(self.roster.handle(name), txn, txn.old)
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
            self.events.publish("profile", Message.event(ProfileReply.from_data(result.profile)))
        txn.done(result)
        return result
