"""Reading an Orin Nano's sysfs: rails by label, zones by type, battery and mains; broken files left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcccd.telemetry.readings import HOST_ROOT_ENV, host_root
from tcccd.telemetry.sysfs import SysfsReader


def test_devkit_without_battery(host_tree) -> None:
    readings = SysfsReader(host_tree("orin-nano-devkit")).read()
    assert readings.rails_w == {"VDD_IN": pytest.approx(6.239, abs=1e-3),
                                "VDD_CPU_GPU_CV": pytest.approx(1.577, abs=1e-3),
                                "VDD_SOC": pytest.approx(1.499, abs=1e-3)}
    assert readings.power_w == readings.rails_w["VDD_IN"]
    assert readings.hottest == ("cpu-thermal", 48.5)
    assert "cv0-thermal" not in readings.zones_c, "the CV cluster's -256 C is a switched-off sensor"
    assert readings.battery_percent is None and readings.battery_status is None
    assert readings.mains_online is False


def test_ups_battery_and_mains(host_tree) -> None:
    readings = SysfsReader(host_tree("with-ups")).read()
    assert readings.battery_percent == 76
    assert readings.battery_status == "Discharging"
    assert readings.battery_voltage_v == pytest.approx(11.73)
    assert readings.battery_current_a == pytest.approx(-1.12)
    assert readings.mains_online is False


def test_rewritten_capacity_is_read_again(host_tree) -> None:
    root = host_tree("with-ups")
    reader = SysfsReader(root)
    (root / "sys/class/power_supply/ups-battery/capacity").write_text("18\n")
    assert reader.read().battery_percent == 18


def test_hwmon_number_does_not_matter(host_tree) -> None:
    root = host_tree("orin-nano-devkit")
    (root / "sys/class/hwmon/hwmon1").rename(root / "sys/class/hwmon/hwmon7")
    assert set(SysfsReader(root).read().rails_w) == {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"}


def test_broken_tree_reports_missing_and_invents_nothing(host_tree) -> None:
    readings = SysfsReader(host_tree("broken")).read()
    assert readings.zones_c == {"tj-thermal": 61.25}
    assert readings.rails_w == {"VDD_SOC": 1.5}
    assert readings.power_w is None
    assert readings.battery_percent is None
    problems = "\n".join(readings.problems)
    for expected in ("cpu-thermal: temp unreadable", "gpu-thermal: temp unreadable", "rail VDD_IN",
                     "battery battery: capacity unreadable or out of 0-100"):
        assert expected in problems


def test_empty_root_reads_nothing(tmp_path: Path) -> None:
    readings = SysfsReader(tmp_path).read()
    assert (readings.zones_c, readings.rails_w, readings.battery_percent, readings.hottest) == ({}, {}, None, None)


def test_host_root_environment_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(HOST_ROOT_ENV, raising=False)
    assert host_root(None) == Path("/")
    assert host_root(tmp_path) == tmp_path
    monkeypatch.setenv(HOST_ROOT_ENV, "/srv/fake")
    assert host_root(tmp_path) == Path("/srv/fake")
