"""A profile's power mode: planned against the box's nvpmodel.conf, applied through the real helper process."""

from __future__ import annotations

import time
from pathlib import Path

from tcccd.telemetry.power_mode import PowerModeSwitcher, plan
from tests.support.hosts import calls


def wait_state(switcher: PowerModeSwitcher, timeout_s: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while switcher.last.get("state") == "switching":
        assert time.monotonic() < deadline, "switch never finished"
        time.sleep(0.02)
    return switcher.status()


def test_plan(jetson, tmp_path: Path) -> None:
    root, _ = jetson
    assert plan(root, "15W")["state"] == "current"
    assert plan(root, "MAXN_SUPER")["state"] == "apply"
    assert plan(root, "7W")["state"] == "needs_reboot"
    assert "this box has: 15W, 25W, MAXN_SUPER, 7W" in plan(root, "10W")["detail"]
    assert plan(tmp_path, "15W")["state"] == "no_nvpmodel"


def test_switch_through_the_helper(jetson, helper_socket: str) -> None:
    root, _ = jetson
    switcher = PowerModeSwitcher(root, helper_socket)
    try:
        switcher.request("MAXN_SUPER")
        status = wait_state(switcher)
        assert (status["current"], status["requested"], status["state"]) == ("MAXN_SUPER", "MAXN_SUPER", "applied")
        assert calls(root) == ["-m 2"]
        switcher.request("7W")
        assert switcher.status()["state"] == "needs_reboot" and switcher.status()["current"] == "MAXN_SUPER"
        assert calls(root) == ["-m 2"]
    finally:
        switcher.close()


def test_helper_down_is_reported(jetson, tmp_path: Path) -> None:
    root, _ = jetson
    switcher = PowerModeSwitcher(root, str(tmp_path / "absent.sock"))
    try:
        switcher.request("25W")
        status = wait_state(switcher)
        assert status["state"] == "failed" and "does not answer" in status["detail"]
        assert status["current"] == "15W"
    finally:
        switcher.close()
