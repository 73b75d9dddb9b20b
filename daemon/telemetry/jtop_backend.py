"""Rails and temperatures through jetson-stats' jtop service, when it runs.

jetson-stats is AGPL-3.0: it is an optional extra (`pip install tcccd[jtop]`), imported only here and only
when asked for, so tcccd never requires or links it otherwise. jtop has no battery percentage, so the
battery and mains still come from sysfs. A jtop that stops updating (its service died) reads as missing:
its last numbers are never passed on as current.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tcccd.telemetry.readings import Readings
from tcccd.telemetry.sysfs import PLAUSIBLE_C, RAIL_LABELS, SysfsReader


class JtopUnavailable(RuntimeError):
    """jetson-stats is not installed, or its service (/run/jtop.sock) does not answer."""


class JtopReader:
    source = "jtop"

    def __init__(self, root: Path, stale_after_s: float = 5.0) -> None:
        try:
            from jtop import jtop  # AGPL-3.0, optional: see the module docstring
        except ImportError as exc:
            raise JtopUnavailable("jetson-stats is not installed (pip install 'tcccd[jtop]')") from exc
        self._jtop = jtop()
        try:
            self._jtop.start()
        except Exception as exc:  # noqa: BLE001 - JtopException and socket errors alike: fall back to sysfs
            raise JtopUnavailable(f"the jtop service does not answer: {exc}") from exc
        self._sysfs = SysfsReader(root)
        self._stale_after_s = stale_after_s
        self._updated_at = time.monotonic()
        self._jtop.attach(self._on_update)

    def _on_update(self, _client: Any) -> None:
        """jtop calls this from its thread after every update from its service."""
        self._updated_at = time.monotonic()

    def read(self) -> Readings:
        readings = Readings(taken_at=time.time(), source=self.source)
        self._sysfs.read_supplies(readings)
        if not self._jtop.is_alive() or time.monotonic() - self._updated_at > self._stale_after_s:
            readings.problems.append(f"jtop: no update for over {self._stale_after_s:.0f} s; rails and zones missing")
            return readings
        rails_from_jtop(self._jtop.power, readings)
        zones_from_jtop(self._jtop.temperature, readings)
        return readings

    def close(self) -> None:
        self._jtop.close()


def rails_from_jtop(power: dict[str, Any], readings: Readings) -> None:
    """jtop 4.x: power['rail'][label] = {'volt': mV, 'curr': mA, 'power': mW, 'online': bool}."""
    for label, rail in (power or {}).get("rail", {}).items():
        if label in RAIL_LABELS and rail.get("online", True) and rail.get("power") is not None:
            readings.rails_w[label] = round(float(rail["power"]) / 1000.0, 3)


def zones_from_jtop(temperature: dict[str, Any], readings: Readings) -> None:
    """jtop 4.x: temperature[name] = {'temp': C, 'online': bool}; named without the '-thermal' suffix."""
    for name, zone in (temperature or {}).items():
        celsius = zone.get("temp") if isinstance(zone, dict) else zone
        if celsius is None or (isinstance(zone, dict) and not zone.get("online", True)):
            continue
        if PLAUSIBLE_C[0] <= float(celsius) <= PLAUSIBLE_C[1]:
            readings.zones_c[f"{name}-thermal"] = float(celsius)


def open_reader(root: Path, backend: str = "auto") -> SysfsReader | JtopReader:
    """'sysfs', 'jtop' (fails loudly without it), or 'auto': jtop when its service answers, else sysfs."""
    if backend == "sysfs":
        return SysfsReader(root)
    try:
        return JtopReader(root)
    except JtopUnavailable:
        if backend == "jtop":
            raise
        return SysfsReader(root)
