"""How an operator reads telemetry: the `tcccd telemetry` screen and the lines `tcccd status` adds."""

from __future__ import annotations

import datetime as dt

from tcccd.telemetry.readings import Readings
from tcccd.wire.status import PowerModeStatus, ProfileState, TelemetryStatus


def _num(value: float | None, fmt: str, unit: str) -> str:
    return "-" if value is None else f"{value:{fmt}}{unit}"


def battery_line(percent: float | None, status: str | None, mains_online: bool | None,
                 voltage_v: float | None = None, current_a: float | None = None) -> str:
    if percent is None:
        text = "- (no battery reading)"
    else:
        text = f"{percent:.0f}%"
        if status:
            text += f" {status}"
        if voltage_v is not None:
            text += f" ({_num(voltage_v, '.2f', ' V')}, {_num(current_a, '.2f', ' A')})"
    return text + ("" if mains_online is None else f"; mains {'on' if mains_online else 'off'}")


def hottest_line(zone: str | None, celsius: float | None) -> str:
    return "- (no temperature reading)" if celsius is None else f"{zone} {celsius:.1f} C"


def render_readings(readings: Readings, power_mode: str | None) -> str:
    """The full `tcccd telemetry` screen."""
    battery = battery_line(readings.battery_percent, readings.battery_status, readings.mains_online,
                           readings.battery_voltage_v, readings.battery_current_a)
    lines = [f"battery     {battery}"]
    rails = ", ".join(f"{label} {watts:.2f}" for label, watts in readings.rails_w.items())
    lines.append(f"power       {_num(readings.power_w, '.2f', ' W')}" + (f" ({rails})" if rails else ""))
    lines.append(f"hottest     {hottest_line(*(readings.hottest or (None, None)))}")
    zones = "  ".join(f"{name} {c:.1f}" for name, c in sorted(readings.zones_c.items()))
    lines.append(f"zones       {zones or '-'}")
    lines.append(f"power mode  {power_mode or '- (no nvpmodel)'}")
    lines.append(f"source      {readings.source}")
    lines += [f"problem     {p}" for p in readings.problems]
    return "\n".join(lines)


def status_lines(profile: ProfileState, telemetry: TelemetryStatus | None, power: PowerModeStatus | None) -> list[str]:
    """What `tcccd status` adds under its profile line: why this profile, and the readings behind it."""
    lines = []
    if profile.requested and profile.requested != profile.name:
        lines.append(f"requested {profile.requested} (capped: {profile.reason})")
    if profile.override_until:
        until = dt.datetime.fromtimestamp(profile.override_until).strftime("%H:%M:%S")
        lines.append(f"override  until {until}: caps bypassed")
    if telemetry:
        battery = battery_line(telemetry.battery_percent, telemetry.battery_status, telemetry.mains_online)
        lines.append(f"battery   {battery}")
        lines.append(f"power     {_num(telemetry.power_w, '.1f', ' W')}   "
                     f"hottest {hottest_line(telemetry.hottest_zone, telemetry.hottest_c)}")
    if power:
        mode = power.current or "-"
        if power.requested and power.requested != power.current:
            mode += f" (profile asks {power.requested}: {power.state}"
            mode += f"; {power.detail})" if power.detail else ")"
        lines.append(f"power mode {mode}")
    return lines
