"""One snapshot of the box's battery, power and temperatures, as read: a missing value stays None."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST_ROOT_ENV = "TCCCD_HOST_ROOT"


def host_root(configured: Path | None = None) -> Path:
    """Where `/` of the host is: $TCCCD_HOST_ROOT (tests, containers), then the config, then `/`."""
    if os.environ.get(HOST_ROOT_ENV):
        return Path(os.environ[HOST_ROOT_ENV])
    return configured or Path("/")


@dataclass
class Readings:
    """What the sensors said at `taken_at` (time.time()); None means not read, never a guess."""

    taken_at: float
    battery_percent: float | None = None
    battery_status: str | None = None
    battery_voltage_v: float | None = None
    battery_current_a: float | None = None
    mains_online: bool | None = None
    rails_w: dict[str, float] = field(default_factory=dict)
    zones_c: dict[str, float] = field(default_factory=dict)
    source: str = "sysfs"
    problems: list[str] = field(default_factory=list)

    @property
    def power_w(self) -> float | None:
        """Total input power: the VDD_IN rail, else what the battery delivers."""
        if "VDD_IN" in self.rails_w:
            return self.rails_w["VDD_IN"]
        if self.battery_voltage_v is not None and self.battery_current_a is not None:
            return abs(self.battery_voltage_v * self.battery_current_a)
        return None

    @property
    def hottest(self) -> tuple[str, float] | None:
        if not self.zones_c:
            return None
        zone = max(self.zones_c, key=lambda name: self.zones_c[name])
        return zone, self.zones_c[zone]

    @property
    def hottest_c(self) -> float | None:
        hottest = self.hottest
        return None if hottest is None else hottest[1]

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        hottest = self.hottest
        data.update(power_w=self.power_w, hottest_zone=hottest[0] if hottest else None,
                    hottest_c=hottest[1] if hottest else None)
        return data


def read_text(path: Path) -> str | None:
    """A sysfs attribute's stripped text, or None when it is absent or cannot be read (EIO, EACCES, ...)."""
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def read_number(path: Path) -> float | None:
    text = read_text(path)
    try:
        return None if text is None else float(text)
    except ValueError:
        return None
