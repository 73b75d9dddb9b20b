"""The daemon's telemetry loop over a fake UPS tree: reads on its interval, caps, and reports."""

from __future__ import annotations

from pathlib import Path

from tcccd.telemetry.monitor import Monitor
from tcccd.telemetry.settings import TelemetrySettings


def capacity(root: Path, percent: int) -> None:
    (root / "sys/class/power_supply/ups-battery/capacity").write_text(f"{percent}\n")


def test_rewritten_battery_steps_down_and_back_up(host_tree) -> None:
    root = host_tree("with-ups")
    monitor = Monitor(TelemetrySettings(backend="sysfs", dwell_s=10), root, "emergency")
    assert monitor.tick(0.0) is None
    capacity(root, 35)
    assert monitor.tick(0.5) is None, "read at most once per interval_s"
    assert monitor.tick(1.0).effective == "field"
    capacity(root, 15)
    decision = monitor.tick(2.0)
    assert (decision.effective, decision.reading, decision.value) == ("training", "battery_percent", 15)
    capacity(root, 80)
    decisions = [monitor.tick(float(t)) for t in range(3, 15)]
    assert [(t, d.effective) for t, d in zip(range(3, 15), decisions, strict=True) if d] == [(13, "emergency")]


def test_report_names_battery_power_and_hottest_zone(host_tree) -> None:
    monitor = Monitor(TelemetrySettings(backend="sysfs"), host_tree("with-ups"), "field")
    monitor.tick(0.0)
    report = monitor.report()
    assert report["battery_percent"] == 76 and report["battery_status"] == "Discharging"
    assert report["power_w"] == 6.239
    assert (report["hottest_zone"], report["hottest_c"]) == ("cpu-thermal", 48.5)
    assert report["source"] == "sysfs" and report["problems"] == []


def test_disabled_monitor_never_decides(host_tree) -> None:
    root = host_tree("with-ups")
    capacity(root, 5)
    monitor = Monitor(TelemetrySettings(backend="sysfs", enabled=False), root, "emergency")
    assert monitor.tick(0.0) is None and monitor.tick(5.0) is None


def test_vanished_battery_is_missing_and_holds_the_cap(host_tree) -> None:
    root = host_tree("with-ups")
    monitor = Monitor(TelemetrySettings(backend="sysfs", dwell_s=0), root, "emergency")
    capacity(root, 30)
    assert monitor.tick(0.0).effective == "field"
    (root / "sys/class/power_supply/ups-battery/capacity").unlink()
    assert monitor.tick(1.0) is None
    assert monitor.report()["battery_percent"] is None
    assert "capacity unreadable" in monitor.report()["problems"][0]
