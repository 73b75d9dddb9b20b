"""How an operator reads telemetry: the `tcccd telemetry` screen and the lines `tcccd status` adds."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tcccd.telemetry.readings import Readings


def _num(value: float | None, fmt: str, unit: str) -> str:
    return "-" if value is None else f"{value:{fmt}}{unit}"


def battery_line(summary: dict[str, Any]) -> str:
    if summary.get("battery_percent") is None:
        text = "- (no battery reading)"
    else:
        text = f"{summary['battery_percent']:.0f}%"
        if summary.get("battery_status"):
            text += f" {summary['battery_status']}"
        if summary.get("battery_voltage_v") is not None:
            text += (f" ({_num(summary['battery_voltage_v'], '.2f', ' V')}, "
                     f"{_num(summary.get('battery_current_a'), '.2f', ' A')})")
    mains = summary.get("mains_online")
    return text + ("" if mains is None else f"; mains {'on' if mains else 'off'}")


def hottest_line(summary: dict[str, Any]) -> str:
    if summary.get("hottest_c") is None:
        return "- (no temperature reading)"
    return f"{summary['hottest_zone']} {summary['hottest_c']:.1f} C"


def render_readings(readings: Readings, power_mode: str | None) -> str:
    """The full `tcccd telemetry` screen."""
    summary = readings.to_dict()
    lines = [f"battery     {battery_line(summary)}"]
    rails = ", ".join(f"{label} {watts:.2f}" for label, watts in readings.rails_w.items())
    lines.append(f"power       {_num(readings.power_w, '.2f', ' W')}" + (f" ({rails})" if rails else ""))
    lines.append(f"hottest     {hottest_line(summary)}")
    zones = "  ".join(f"{name} {c:.1f}" for name, c in sorted(readings.zones_c.items()))
    lines.append(f"zones       {zones or '-'}")
    lines.append(f"power mode  {power_mode or '- (no nvpmodel)'}")
    lines.append(f"source      {readings.source}")
    lines += [f"problem     {p}" for p in readings.problems]
    return "\n".join(lines)


def status_lines(profile: dict[str, Any], telemetry: dict[str, Any] | None, power: dict[str, Any] | None) -> list[str]:
    """What `tcccd status` adds under its profile line: why this profile, and the readings behind it."""
    lines = []
    if profile.get("requested") and profile["requested"] != profile.get("name"):
        lines.append(f"requested {profile['requested']} (capped: {profile.get('reason', '')})")
    if profile.get("override_until"):
        until = dt.datetime.fromtimestamp(profile["override_until"]).strftime("%H:%M:%S")
        lines.append(f"override  until {until}: caps bypassed")
    if telemetry:
        lines.append(f"battery   {battery_line(telemetry)}")
        lines.append(f"power     {_num(telemetry.get('power_w'), '.1f', ' W')}   hottest {hottest_line(telemetry)}")
    if power:
        mode = power.get("current") or "-"
        if power.get("requested") and power["requested"] != power.get("current"):
            mode += f" (profile asks {power['requested']}: {power.get('state')}"
            mode += f"; {power['detail']})" if power.get("detail") else ")"
        lines.append(f"power mode {mode}")
    return lines
