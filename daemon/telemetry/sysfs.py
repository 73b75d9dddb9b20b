"""Readings straight from sysfs under a host root: INA3221 rails, thermal zones, power supplies.

hwmon numbers and zone numbers change between boots and kernels, so rails are found by the
chip's `name` and matched by channel label, and zones by their `type`. A file that is missing,
unreadable or holds nonsense is left out and named in `problems`; nothing is filled in.
"""

from __future__ import annotations

import time
from pathlib import Path

from tcccd.telemetry.readings import Readings, read_number, read_text

RAIL_CHIPS = ("ina3221",)
RAIL_LABELS = ("VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC")
# Below -40 C or above 150 C a zone is broken (cv*-thermal reads 0 or -40 C on an Orin Nano with the CV
# cluster off), not a temperature to act on.
PLAUSIBLE_C = (-39.0, 150.0)
BATTERY_TYPES = ("Battery", "UPS")
MAINS_TYPES = ("Mains", "USB", "USB_PD", "USB_C")


class SysfsReader:
    """Reads one Readings snapshot per call; cheap (a few dozen small files), so call it every second."""

    source = "sysfs"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sys_class = root / "sys" / "class"

    def read(self) -> Readings:
        readings = Readings(taken_at=time.time(), source=self.source)
        self.read_rails(readings)
        self.read_zones(readings)
        self.read_supplies(readings)
        return readings

    def read_rails(self, readings: Readings) -> None:
        for chip in sorted((self.sys_class / "hwmon").glob("hwmon*")):
            if (read_text(chip / "name") or "").lower() not in RAIL_CHIPS:
                continue
            for label_file in sorted(chip.glob("in*_label")):
                label = read_text(label_file)
                if label not in RAIL_LABELS:
                    continue
                channel = label_file.name.removeprefix("in").removesuffix("_label")
                millivolts = read_number(chip / f"in{channel}_input")
                milliamps = read_number(chip / f"curr{channel}_input")
                if millivolts is None or milliamps is None:
                    readings.problems.append(f"rail {label}: {chip.name} channel {channel} unreadable")
                    continue
                readings.rails_w[label] = round(millivolts * milliamps / 1e6, 3)

    def read_zones(self, readings: Readings) -> None:
        for zone in sorted((self.sys_class / "thermal").glob("thermal_zone*")):
            kind = read_text(zone / "type") or zone.name
            millidegrees = read_number(zone / "temp")
            if millidegrees is None:
                readings.problems.append(f"zone {kind}: temp unreadable")
                continue
            celsius = millidegrees / 1000.0
            if celsius < PLAUSIBLE_C[0]:
                continue  # a switched-off sensor, normal for the CV cluster: not a fault
            if celsius > PLAUSIBLE_C[1]:
                readings.problems.append(f"zone {kind}: {celsius:.1f} C is not a temperature")
                continue
            readings.zones_c[kind] = celsius

    def read_supplies(self, readings: Readings) -> None:
        for supply in sorted((self.sys_class / "power_supply").glob("*")):
            kind = read_text(supply / "type")
            if kind in MAINS_TYPES:
                online = read_number(supply / "online")
                if online is not None:
                    readings.mains_online = bool(online) or bool(readings.mains_online)
            elif kind in BATTERY_TYPES and readings.battery_percent is None:
                self._read_battery(supply, readings)

    @staticmethod
    def _read_battery(supply: Path, readings: Readings) -> None:
        capacity = read_number(supply / "capacity")
        if capacity is None or not 0 <= capacity <= 100:
            readings.problems.append(f"battery {supply.name}: capacity unreadable or out of 0-100")
            return
        readings.battery_percent = capacity
        readings.battery_status = read_text(supply / "status")
        microvolts = read_number(supply / "voltage_now")
        microamps = read_number(supply / "current_now")
        readings.battery_voltage_v = None if microvolts is None else microvolts / 1e6
        readings.battery_current_a = None if microamps is None else microamps / 1e6
