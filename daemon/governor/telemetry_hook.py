"""Which profile runs: the one requested, capped by the readings, or an operator's override; applied for real.

The governor stands in front of the ProfileSwitcher for everything that asks for a profile by
intent (`profile.set`, the telemetry policy), and leaves the switcher the one way a profile is
applied (validated, transactional). It acts on edges: when the policy's decision changes it
switches, retrying while another switch is still being applied, and then lets go, so a memory
step-down made later by another policy is not fought every second. Every decision is published
on the `profile` topic (type `profile.decision`, `name` = the profile to run) with the readings that
caused it; a client's request is answered, and announced by the switcher once applied. The memory
capper's step-down comes through here too (`step_down`), so the power mode follows it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

from tcccd import config as cfg
from tcccd.governor.profiles import ProfileBook
from tcccd.governor.switch import ProfileSwitcher, SwitchResult
from tcccd.ports import ConfigSource, Publisher
from tcccd.telemetry.monitor import Monitor
from tcccd.telemetry.policy import Decision
from tcccd.telemetry.power_mode import PowerModeSwitcher
from tcccd.telemetry.readings import host_root
from tcccd.wire.protocol import Message
from tcccd.wire.replies import ProfileDecision

Done = Callable[[SwitchResult], None]
RETRY_S = 5.0


class ProfileGovernor:
    def __init__(self, config: ConfigSource, book: ProfileBook, switcher: ProfileSwitcher,
                 events: Publisher) -> None:
        self.config = config
        self.book = book
        self.switcher = switcher
        self.events = events
        running = config.current()
        settings = running.daemon.telemetry
        root = host_root(running.daemon.host_root)
        self.monitor = Monitor(settings, root, running.profile)
        self.power = PowerModeSwitcher(root, settings.nvpmodel_socket)
        self.wanted: str | None = None
        self.retry_at = 0.0  # monotonic: the next try of a decision the workers did not apply
        self.log = structlog.get_logger()

    @property
    def policy(self) -> Any:
        return self.monitor.policy

    def start(self) -> None:
        """The configured profile's power mode, at start and after a reload."""
        self.power.request(self._power_mode(self.switcher.current["name"]))

    def reset(self) -> None:
        """A reload: the config's profile is the request again."""
        self.policy.request(self.config.current().profile, time.time())
        self.wanted = self.policy.current.effective
        self.start()

    # LocalRequests' view of the profile: what runs, what was asked for, and why they differ.
    @property
    def current(self) -> dict[str, Any]:
        return {**self.switcher.current, **self._intent()}

    def info(self) -> dict[str, Any]:
        return {**self.switcher.info(), **self._intent()}

    def report(self) -> dict[str, Any]:
        return {"telemetry": self.monitor.report(), "power_mode": self.power.status()}

    def _intent(self) -> dict[str, Any]:
        decision = self.policy.current
        return {"requested": self.policy.requested, "override_until": decision.override_until,
                "cap": decision.cap, "reading": decision.reading, "value": decision.value}

    def switch(self, name: str, reason: str, done: Done | None = None, for_s: float | None = None) -> SwitchResult:
        """A person or client asks for `name` (an override for `for_s` seconds); the caps decide what runs."""
        if name not in self.book.available() or self.switcher.pending is not None:
            return self.switcher.switch(name, reason, done)  # refused there: unknown profile, or busy
        before = (self.policy.requested, self.policy.override)
        self.policy.request(name, time.time(), for_s)  # the switcher announces what it applies
        effective = self.policy.current.effective
        why = reason if effective == name and for_s is None else f"{reason}; {self.policy.current.reason}"
        self.wanted = None  # this switch supersedes any the policy still had in mind
        return self.switcher.switch(effective, why, self._then_power(done, undo=before))

    def step_down(self, name: str, reason: str) -> bool:
        """The memory capper's step-down to a lighter profile: applied (with its power mode) unless refused."""
        self.wanted = None  # the capper's decision stands until the readings change the policy's
        return self.switcher.switch(name, reason, self._then_power(None)).state != "refused"

    def tick(self, now: float) -> None:
        """The daemon's periodic hook: read, decide, and keep trying until the decision is applied."""
        decision = self.monitor.tick(time.time())
        if decision is not None:
            self._announce(decision)
            self.wanted, self.retry_at = decision.effective, 0.0
        if self.wanted is None or self.switcher.pending is not None or now < self.retry_at:
            return
        if self.switcher.current["name"] == self.wanted:
            self.wanted = None
            return
        result = self.switcher.switch(self.wanted, self.policy.current.reason, self._then_power(self._retry_later))
        if result.state == "refused" and result.code != "busy":
            self.log.error("profile decision could not be applied", profile=self.wanted, error=result.message)
            self.wanted = None

    def _retry_later(self, result: SwitchResult) -> None:
        """A decision that workers refused or never confirmed (the switcher logged why) is tried again after
        RETRY_S, until it applies; `busy` (another switch, workers still starting) at the next tick."""
        if result.state == "refused" and result.code != "busy":
            self.retry_at = time.monotonic() + RETRY_S

    def _announce(self, decision: Decision) -> None:
        self.events.publish("profile", Message.event(ProfileDecision(name=decision.effective, **decision.to_dict())))

    def _then_power(self, done: Done | None, undo: tuple[str, Any] | None = None) -> Done:
        """After a switch: the profile's power mode when it applied; the old request back when it was refused."""
        def finished(result: SwitchResult) -> None:
            if result.state == "applied":
                self.power.request(self._power_mode(self.switcher.current["name"]))
            elif undo is not None:
                self.policy.restore(*undo, time.time())
            result.profile = self.info()
            if done is not None:
                done(result)
        return finished

    def _power_mode(self, profile: str) -> str | None:
        try:
            return self.book.load(profile).power_mode
        except cfg.ConfigError:
            return None

    def close(self) -> None:
        self.power.close()
