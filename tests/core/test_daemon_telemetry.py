"""A running daemon on a fake UPS box: rewriting the battery's capacity file steps the profile down in every
worker and back up after the dwell; an operator override bypasses the caps until it expires; power modes
follow the profile through the real root helper and a fake nvpmodel."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import SLOW, DaemonProcess, make_config
from tests.support.hosts import calls

BEAMS = {"training": 1, "field": 3, "emergency": 5}
MODES = {"training": "7W", "field": "15W", "emergency": "MAXN_SUPER"}


def capacity(root: Path, percent: int) -> None:
    path = root / "sys/class/power_supply/ups-battery/capacity"
    path.with_suffix(".new").write_text(f"{percent}\n")
    path.with_suffix(".new").replace(path)


@pytest.fixture
def daemon(jetson, helper_socket: str, tmp_path: Path):
    root, _ = jetson
    capacity(root, 80)
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    for name, beam in BEAMS.items():
        (profiles / f"{name}.yaml").write_text(f"power_mode: {MODES[name]}\nplugins:\n  slow: {{beam_size: {beam}}}\n")
    pipeline = [{"name": "a", "plugin": SLOW}, {"name": "b", "plugin": SLOW}]
    telemetry = {"backend": "sysfs", "interval_s": 0.2, "dwell_s": 2.0, "nvpmodel_socket": helper_socket}
    config = make_config(tmp_path, pipeline, {"echo_a": ["a"], "echo_b": ["b"]},
                         {"profiles_dir": str(profiles), "profile": "emergency"}, telemetry=telemetry)
    proc = DaemonProcess(tmp_path, config, env={"TCCCD_HOST_ROOT": str(root)})
    try:
        proc.wait_healthy()
        yield proc, root
    finally:
        proc.stop()


def beams(proc: DaemonProcess) -> set[int]:
    """The beam_size each worker runs with: the profile as applied, not as reported."""
    with proc.client() as client:
        return {client.call(kind).data["beam_size"] for kind in ("echo_a", "echo_b")}


def on_profile(name: str) -> Any:
    return lambda r: r["profile"]["name"] == name


def test_battery_steps_down_and_back_up(daemon) -> None:
    proc, root = daemon
    report = proc.wait_for(lambda r: r["power_mode"].get("state") == "applied")
    assert report["telemetry"]["battery_percent"] == 80 and report["power_mode"]["current"] == "MAXN_SUPER"
    with proc.client() as client:
        events = client.subscribe(["profile"])
        time.sleep(0.3)
        capacity(root, 35)
        report = proc.wait_for(on_profile("field"), timeout_s=10)
        assert report["profile"]["requested"] == "emergency"
        assert report["profile"]["reading"] == "battery_percent" and report["profile"]["value"] == 35
        assert "battery_percent reached 35% (<= 40%)" in report["profile"]["reason"]
        assert beams(proc) == {BEAMS["field"]}
        decision = next(e for _, e in iter(lambda: events.next(5), None) if e.type == "profile.decision")
        assert (decision.data["name"], decision.data["value"]) == ("field", 35)
        assert proc.wait_for(lambda r: r["power_mode"]["current"] == "15W")["power_mode"]["state"] == "applied"

        capacity(root, 15)
        proc.wait_for(on_profile("training"), timeout_s=10)
        assert beams(proc) == {BEAMS["training"]}
        report = proc.wait_for(lambda r: r["power_mode"].get("requested") == "7W")
        assert report["power_mode"]["state"] == "needs_reboot" and report["power_mode"]["current"] == "15W"

        capacity(root, 90)
        time.sleep(1.0)
        assert client.status().profile.name == "training", "a cap lifts only after dwell_s"
        proc.wait_for(on_profile("emergency"), timeout_s=10)
        assert beams(proc) == {BEAMS["emergency"]}
    assert calls(root) == ["-m 2", "-m 0", "-m 2"]
    screen = proc.cli("status").stdout
    assert "battery   90% Discharging" in screen and "power mode MAXN_SUPER" in screen


def test_override_bypasses_the_cap_until_it_expires(daemon) -> None:
    proc, root = daemon
    capacity(root, 15)
    proc.wait_for(on_profile("training"), timeout_s=10)
    result = proc.cli("profile", "set", "emergency", "--for", "3s")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("emergency (set with tcccd profile set; operator override until")
    report = proc.wait_for(on_profile("emergency"))
    assert report["profile"]["override_until"] is not None and beams(proc) == {BEAMS["emergency"]}
    assert "override  until" in proc.cli("status").stdout
    report = proc.wait_for(on_profile("training"), timeout_s=10)
    assert report["profile"]["override_until"] is None and report["profile"]["requested"] == "emergency"
    assert beams(proc) == {BEAMS["training"]}


def test_plain_request_is_capped(daemon) -> None:
    proc, root = daemon
    capacity(root, 30)
    proc.wait_for(on_profile("field"), timeout_s=10)
    result = proc.cli("profile", "set", "training")
    assert result.stdout.startswith("training (set with tcccd profile set)")
    result = proc.cli("profile", "set", "emergency")
    assert result.stdout.startswith("field (set with tcccd profile set; battery_percent reached 30% (<= 40%)")
    assert "requested emergency" in result.stdout
    bad = proc.cli("profile", "set", "emergency", "--for", "soon")
    assert bad.returncode == 2 and "'soon' is not a duration" in bad.stderr
