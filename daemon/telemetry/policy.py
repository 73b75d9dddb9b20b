"""Which profile runs: the one requested, capped by battery and temperature, unless an operator overrides.

A cap applies on the first reading past its threshold. It lifts only after the reading has stayed a
margin on the good side for `dwell_s`, so a battery hovering at 40% +- 2 switches once, not every
second. A reading that is missing neither starts a cap nor counts towards lifting one: the box is
not run faster because a sensor fell silent. A decision is made only when the effective profile or
the cap binding it changes; every decision carries the reading and value behind it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from tcccd.telemetry.settings import TelemetrySettings


@dataclass(frozen=True)
class CapRule:
    reading: str
    threshold: float
    cap: str
    low_is_bad: bool
    margin: float
    unit: str

    def breached(self, value: float) -> bool:
        return value <= self.threshold if self.low_is_bad else value >= self.threshold

    def clear(self, value: float) -> bool:
        return value >= self.threshold + self.margin if self.low_is_bad else value <= self.threshold - self.margin

    def describe(self, value: float) -> str:
        op = "<=" if self.low_is_bad else ">="
        return f"{self.reading} reached {value:g}{self.unit} ({op} {self.threshold:g}{self.unit})"

    def describe_clear(self, value: float, dwell_s: float) -> str:
        op, bound = (">=", self.threshold + self.margin) if self.low_is_bad else ("<=", self.threshold - self.margin)
        return f"{self.reading} {value:g}{self.unit} stayed {op} {bound:g}{self.unit} for {dwell_s:g} s"


def rules_from(settings: TelemetrySettings) -> list[CapRule]:
    """Most severe first: when two caps hold, the first one that binds is the one reported."""
    battery, thermal = settings.battery_margin_percent, settings.thermal_margin_c
    return [
        CapRule("battery_percent", settings.battery_training_percent, "training", True, battery, "%"),
        CapRule("hottest_c", settings.thermal_training_c, "training", False, thermal, " C"),
        CapRule("battery_percent", settings.battery_field_percent, "field", True, battery, "%"),
        CapRule("hottest_c", settings.thermal_field_c, "field", False, thermal, " C"),
    ]


@dataclass
class _Cap:
    value: float
    clear_since: float | None = None


@dataclass
class Decision:
    at: float
    requested: str
    effective: str
    reason: str
    cap: str | None = None
    reading: str | None = None
    value: float | None = None
    override_until: float | None = None
    readings: dict[str, float | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class CapPolicy:
    """Pure state machine: feed it readings and requests with the time they happened."""

    def __init__(self, settings: TelemetrySettings, requested: str) -> None:
        self.settings = settings
        self.rules = rules_from(settings)
        self.requested = requested
        self.override: tuple[str, float] | None = None
        self.caps: dict[CapRule, _Cap] = {}
        self.current = Decision(0.0, requested, requested, "requested")

    def rank(self, name: str) -> int:
        """Position from economical to fast; a profile outside the order counts as the fastest."""
        order = self.settings.profile_order
        return order.index(name) if name in order else len(order)

    def request(self, name: str, now: float, for_s: float | None = None) -> Decision | None:
        """A person or client asks for `name`; with `for_s` it is an override that bypasses the caps."""
        if for_s is None:
            self.requested, self.override = name, None
        else:
            self.override = (name, now + for_s)
        return self._decide(now, {}, lifted=None)

    def restore(self, requested: str, override: tuple[str, float] | None, now: float) -> Decision | None:
        """Undo a request that could not be applied (the profile was refused)."""
        self.requested, self.override = requested, override
        return self._decide(now, {}, lifted=None)

    def update(self, values: dict[str, float | None], now: float) -> Decision | None:
        lifted: tuple[CapRule, float] | None = None
        for rule in self.rules:
            value = values.get(rule.reading)
            cap = self.caps.get(rule)
            if value is None:
                if cap is not None:
                    cap.clear_since = None
            elif rule.breached(value):
                self.caps[rule] = _Cap(value)  # the latest value past the threshold is the one reported
            elif cap is not None and rule.clear(value):
                cap.clear_since = now if cap.clear_since is None else cap.clear_since
                if now - cap.clear_since >= self.settings.dwell_s:
                    del self.caps[rule]
                    lifted = (rule, value)
            elif cap is not None:
                cap.clear_since = None
        return self._decide(now, values, lifted)

    def binding(self) -> CapRule | None:
        active = [rule for rule in self.rules if rule in self.caps]
        return min(active, key=lambda rule: self.rank(rule.cap)) if active else None

    def _decide(self, now: float, values: dict[str, float | None], lifted: tuple[CapRule, float] | None
                ) -> Decision | None:
        if self.override is not None and now >= self.override[1]:
            self.override = None
        rule = self.binding()
        decision = Decision(now, self.requested, self.requested, "requested", readings=dict(values))
        if self.override is not None:
            decision.effective, decision.override_until = self.override
            until = dt.datetime.fromtimestamp(self.override[1], dt.timezone.utc).strftime("%H:%M:%S UTC")
            decision.reason = f"operator override until {until}; caps bypassed"
        elif rule is not None and self.rank(rule.cap) < self.rank(self.requested):
            value = self.caps[rule].value
            decision.effective, decision.cap = rule.cap, rule.cap
            decision.reading, decision.value = rule.reading, value
            decision.reason = f"{rule.describe(value)}: capped at {rule.cap}"
        elif lifted is not None:
            decision.reading, decision.value = lifted[0].reading, lifted[1]
            decision.reason = f"{lifted[0].describe_clear(lifted[1], self.settings.dwell_s)}: cap lifted"
        before = self.current
        if (decision.effective, decision.cap, decision.override_until) == (
                before.effective, before.cap, before.override_until) and decision.requested == before.requested:
            return None
        self.current = decision
        return decision
