"""The daemon's side of telemetry: read every `interval_s`, feed the cap policy, remember what was read.

The daemon calls `tick(now)` from its loop; it reads at most once per interval, so the loop's own pace
does not matter. A reader that fails is reported as missing readings, never as an exception in the loop.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import structlog

from tcccd.telemetry.jtop_backend import open_reader
from tcccd.telemetry.policy import CapPolicy, Decision
from tcccd.telemetry.readings import Readings
from tcccd.telemetry.settings import TelemetrySettings


def policy_values(readings: Readings) -> dict[str, float | None]:
    return {"battery_percent": readings.battery_percent, "hottest_c": readings.hottest_c}


class Monitor:
    def __init__(self, settings: TelemetrySettings, root: Path, requested: str) -> None:
        self.settings = settings
        self.root = root
        self.reader = open_reader(root, settings.backend)
        self.policy = CapPolicy(settings, requested)
        self.readings: Readings | None = None
        self.next_read_at = 0.0
        self.log = structlog.get_logger()

    def read(self) -> Readings:
        try:
            return self.reader.read()
        except Exception as exc:  # noqa: BLE001 - a sensor backend failing must not stop the daemon
            return Readings(taken_at=time.time(), source=self.reader.source, problems=[f"read failed: {exc}"])

    def tick(self, now: float) -> Decision | None:
        """Read if due and return the policy's decision, if the readings changed what should run."""
        if not self.settings.enabled or now < self.next_read_at:
            return None
        self.next_read_at = now + self.settings.interval_s
        self.readings = self.read()
        decision = self.policy.update(policy_values(self.readings), now)
        if decision is not None:
            self.log.info("profile decision", effective=decision.effective, requested=decision.requested,
                          reason=decision.reason, **self.summary())
        return decision

    def request(self, name: str, now: float, for_s: float | None = None) -> Decision | None:
        return self.policy.request(name, now, for_s)

    def summary(self) -> dict[str, Any]:
        """The readings an operator reads first: battery, power draw, the hottest zone."""
        r = self.readings
        hottest = r.hottest if r else None
        return {"battery_percent": r.battery_percent if r else None,
                "battery_status": r.battery_status if r else None,
                "mains_online": r.mains_online if r else None,
                "power_w": r.power_w if r else None,
                "hottest_zone": hottest[0] if hottest else None,
                "hottest_c": hottest[1] if hottest else None}

    def report(self) -> dict[str, Any]:
        return {**self.summary(), "source": self.reader.source, "enabled": self.settings.enabled,
                "read_at": self.readings.taken_at if self.readings else None,
                "problems": self.readings.problems if self.readings else []}
