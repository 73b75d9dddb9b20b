"""Power modes by name, and the root helper against a fake nvpmodel binary over its real socket."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tcccd.system.nvpmodel_helper import switch
from tcccd.telemetry.nvpmodel import PowerModeError, ask_helper, current_mode, load_modes
from tests.support.hosts import calls


def test_modes_parsed_by_name(jetson) -> None:
    root, _ = jetson
    modes = load_modes(root)
    assert modes is not None
    assert [(m.id, m.name) for m in modes.modes] == [(0, "15W"), (1, "25W"), (2, "MAXN_SUPER"), (3, "7W")]
    assert modes.default_id == 0
    assert current_mode(root, modes).name == "15W"
    assert modes.needs_reboot(modes.by_name("7W"), modes.by_name("15W"))
    assert not modes.needs_reboot(modes.by_name("MAXN_SUPER"), modes.by_name("15W"))
    with pytest.raises(PowerModeError, match="this box has: 15W, 25W, MAXN_SUPER, 7W"):
        modes.by_name("10W")


def test_not_a_jetson(tmp_path: Path) -> None:
    assert load_modes(tmp_path) is None
    assert "not a Jetson" in switch(tmp_path, "/bin/false", {"mode": "15W"})["error"]


def test_switch_runs_nvpmodel_with_the_configs_id(jetson) -> None:
    root, binary = jetson
    assert switch(root, binary, {"mode": "MAXN_SUPER"}) == {"ok": True, "mode": "MAXN_SUPER", "id": 2,
                                                            "changed": True}
    assert calls(root) == ["-m 2"]
    assert switch(root, binary, {"mode": "MAXN_SUPER"})["changed"] is False
    assert calls(root) == ["-m 2"], "the running mode is not switched again"


def test_reboot_mode_is_reported_not_applied(jetson) -> None:
    root, binary = jetson
    answer = switch(root, binary, {"mode": "7W"})
    assert answer["ok"] is False and answer["needs_reboot"] is True and "applies only at boot" in answer["error"]
    assert calls(root) == []


@pytest.mark.parametrize("request_", [{"mode": "15W; reboot"}, {"mode": ["15W"]}, "15W", None, {"id": 0}])
def test_anything_but_a_configured_name_is_refused(jetson, request_) -> None:
    root, binary = jetson
    assert switch(root, binary, request_)["ok"] is False
    assert calls(root) == []


def test_failing_nvpmodel_is_reported(jetson) -> None:
    root, _ = jetson
    answer = switch(root, "/bin/false", {"mode": "25W"})
    assert answer["ok"] is False and "nvpmodel -m 1 exited 1" in answer["error"]


def test_helper_process_over_its_socket(jetson, helper_socket: str) -> None:
    root, _ = jetson
    assert ask_helper(helper_socket, "25W")["ok"] is True
    assert calls(root) == ["-m 1"]
    with socket.socket(socket.AF_UNIX) as raw:
        raw.connect(helper_socket)
        raw.sendall(b"not json\n")
        assert json.loads(raw.makefile().readline())["ok"] is False
    assert ask_helper(helper_socket, "7W")["needs_reboot"] is True


def test_client_refuses_odd_names_before_sending(tmp_path: Path) -> None:
    with pytest.raises(PowerModeError, match="not a power mode name"):
        ask_helper(str(tmp_path / "none.sock"), "../../bin/sh")
    with pytest.raises(PowerModeError, match="does not answer"):
        ask_helper(str(tmp_path / "none.sock"), "15W")
