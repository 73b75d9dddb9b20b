"""`tcccd telemetry` and `tcccd telemetry replay`, run as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.hosts import DATA

REPO = Path(__file__).resolve().parents[2]


def tcccd(*args: str, root: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("TCCCD_CONFIG", None)
    if root is not None:
        env["TCCCD_HOST_ROOT"] = str(root)
    return subprocess.run([sys.executable, "-m", "tcccd", *args], capture_output=True, text=True, timeout=60,
                          env=env, cwd=REPO)


def test_telemetry_screen_on_a_ups_box(host_tree) -> None:
    result = tcccd("telemetry", root=host_tree("with-ups"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "battery     76% Discharging (11.73 V, -1.12 A); mains off"
    assert lines[1].startswith("power       6.24 W (VDD_IN 6.24")
    assert lines[2] == "hottest     cpu-thermal 48.5 C"
    assert "power mode  15W" in lines


def test_telemetry_json_reports_missing_as_null(host_tree) -> None:
    result = tcccd("telemetry", "--json", root=host_tree("broken"))
    data = json.loads(result.stdout)
    assert data["battery_percent"] is None and data["power_w"] is None and data["power_mode"] is None
    assert data["hottest_zone"] == "tj-thermal" and data["hottest_c"] == 61.25
    assert any("capacity unreadable" in p for p in data["problems"])


def test_replay_prints_the_decisions() -> None:
    result = tcccd("telemetry", "replay", str(DATA / "discharge.csv"), "--requested", "emergency")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "t=  3600.0 s  field      battery_percent reached 40% (<= 40%): capped at field",
        "t=  4800.0 s  training   battery_percent reached 20% (<= 20%): capped at training",
        "2 decision(s) over 1141 samples (5700 s)"]


def test_replay_json_and_the_configs_thresholds(tmp_path: Path) -> None:
    config = tmp_path / "tcccd.yaml"
    config.write_text("profile: emergency\ndaemon:\n  telemetry:\n    battery_field_percent: 60\n")
    result = tcccd("--config", str(config), "telemetry", "replay", str(DATA / "discharge.csv"), "--json")
    decisions = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["at"], d["effective"], d["value"]) for d in decisions] == [(2400, "field", 60.0),
                                                                          (4800, "training", 20.0)]


def test_replay_of_a_bad_trace_says_why(tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text("when,battery\n")
    result = tcccd("telemetry", "replay", str(trace))
    assert result.returncode == 2
    assert "the header must have t_s" in result.stderr and "Traceback" not in result.stderr


def test_bad_telemetry_config_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "tcccd.yaml"
    config.write_text("daemon:\n  telemetry:\n    battery_training_percent: 50\n")
    result = tcccd("config", "check", str(config))
    assert result.returncode == 2
    assert "battery_training_percent must not be above battery_field_percent" in result.stderr


def test_profile_power_mode_must_be_a_name(tmp_path: Path) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "field.yaml").write_text("power_mode: ../../bin/sh\n")
    config = tmp_path / "tcccd.yaml"
    config.write_text(f"profiles_dir: {profiles}\n")
    result = tcccd("config", "check", str(config))
    assert result.returncode == 2 and "power_mode" in result.stderr
