"""Where the kit stands: gpsd's fix, else the medic's own TAK device heard on the feed, else the fixed point.

Each source's latest position is kept with the time it was measured; one
older than `tak.position_max_age_s` is not used. None known: no point, and
`why()` says what each source lacks, so the medic hears why nothing was sent.
An unknown point is never written as a real one (no 0,0, no last-known kept
past its age).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tcccd.tak.cot import Point
from tcccd.tak_settings import TakSettings


@dataclass(frozen=True)
class _Latest:
    point: Point | None = None
    problem: str = "not heard yet"


class PositionBook:
    def __init__(self, settings: TakSettings) -> None:
        self.settings = settings
        self.gpsd = _Latest(problem="gpsd not read" if settings.gpsd.enabled else "gpsd off in the config")
        self.device = _Latest(problem="no callsign or device_uid configured"
                              if not (settings.callsign or settings.device_uid) else "its position not heard yet")

    def heard(self, point: Point) -> None:
        """A position from the link's thread (via the service): gpsd's or the TAK device's."""
        if not (math.isfinite(point.lat) and math.isfinite(point.lon)):
            return
        if point.source == "gpsd":
            self.gpsd = _Latest(point, "")
        else:
            self.device = _Latest(point, "")

    def gpsd_problem(self, problem: str) -> None:
        """gpsd's state: '' while it gives a fix; a problem drops its last fix (never kept as a real one)."""
        self.gpsd = _Latest(self.gpsd.point if not problem else None, problem)

    def best(self, now: float) -> Point | None:
        for latest in (self.gpsd, self.device):
            if latest.point is not None and now - latest.point.ts <= self.settings.position_max_age_s:
                return latest.point
        fixed = self.settings.fixed_point
        if fixed is not None:
            return Point(fixed.lat, fixed.lon, fixed.hae_m, fixed.ce_m, None, "fixed point", "h-e", now)
        return None

    def why(self, now: float) -> str:
        """Why there is no point: each source's problem."""
        parts = []
        for name, latest in (("gpsd", self.gpsd), ("TAK device", self.device)):
            if latest.point is not None:
                parts.append(f"{name}: last position {round(now - latest.point.ts)} s old "
                             f"(max {self.settings.position_max_age_s:g} s)")
            else:
                parts.append(f"{name}: {latest.problem}")
        parts.append("fixed point: not configured")
        return "no position known (" + "; ".join(parts) + ")"

    def report(self, now: float) -> dict[str, object]:
        point = self.best(now)
        return {"position_source": point.source if point else None,
                "position_age_s": round(now - point.ts, 1) if point else None,
                "position_problem": None if point else self.why(now)}
