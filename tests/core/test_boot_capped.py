"""A kit that boots on a low battery and a hot junction: the cap decided before the workers are ready is applied
once they are, and `tcccd status` (the real CLI) says so; the workers run the capped profile's parameters."""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.daemon import SLOW, DaemonProcess, make_config

BEAMS = {"training": 1, "field": 3, "emergency": 5}


def test_a_cap_present_at_start_is_applied_once_the_workers_are_ready(host_tree, tmp_path: Path) -> None:
    root = host_tree("with-ups")
    (root / "sys/class/power_supply/ups-battery/capacity").write_text("15\n")
    (root / "sys/class/thermal/thermal_zone8/temp").write_text("90000\n")  # tj-thermal, 90 C
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    for name, beam in BEAMS.items():
        (profiles / f"{name}.yaml").write_text(f"plugins:\n  slow: {{beam_size: {beam}}}\n")
    # workers that take a while to set up, as models do: the first decision comes long before they are ready
    pipeline = [{"name": n, "plugin": SLOW, "params": {"setup_delay_s": 2.0}} for n in ("a", "b")]
    telemetry = {"backend": "sysfs", "interval_s": 0.2, "nvpmodel_socket": str(tmp_path / "no-helper.sock")}
    config = make_config(tmp_path, pipeline, {"echo_a": ["a"], "echo_b": ["b"]},
                         {"profiles_dir": str(profiles), "profile": "field"}, telemetry=telemetry)
    proc = DaemonProcess(tmp_path, config, env={"TCCCD_HOST_ROOT": str(root)})
    try:
        proc.wait_for(lambda r: all(s["state"] == "ready" for s in r["stages"]), timeout_s=60)
        ready_at = time.monotonic()
        screen = ""
        while time.monotonic() - ready_at < 10:
            screen = proc.cli("status").stdout
            if "profile   training" in screen:
                break
            time.sleep(0.2)
        assert "profile   training" in screen, f"still not training 10 s after the workers were ready:\n{screen}"
        assert "battery_percent reached 15%" in screen
        with proc.client() as client:
            assert {client.call(kind).data["beam_size"] for kind in ("echo_a", "echo_b")} == {BEAMS["training"]}
            assert client.status().profile.name == "training"
    finally:
        proc.stop()
