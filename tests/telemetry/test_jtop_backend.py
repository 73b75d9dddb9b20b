"""The optional jtop backend, against a stand-in `jtop` module (jetson-stats is not installed here)."""

from __future__ import annotations

import sys
import types

import pytest

from tcccd.telemetry import jtop_backend
from tcccd.telemetry.jtop_backend import JtopReader, JtopUnavailable, open_reader
from tcccd.telemetry.sysfs import SysfsReader


class FakeJtopClient:
    """What jetson-stats 4.x's client shows: power['rail'][label] in mW, temperature[name]['temp'] in C."""

    service_running = True

    def __init__(self) -> None:
        self.callbacks: list = []
        self.alive = True
        self.power = {"rail": {"VDD_IN": {"volt": 5064, "curr": 1232, "power": 6239, "online": True},
                               "VDD_SOC": {"volt": 5064, "curr": 296, "power": 1499, "online": True}},
                      "tot": {"power": 7738}}
        self.temperature = {"cpu": {"temp": 48.5, "online": True}, "cv0": {"temp": -256.0, "online": False},
                            "tj": {"temp": 49.0, "online": True}}

    def start(self) -> None:
        if not self.service_running:
            raise RuntimeError("The jtop.service is not active")

    def attach(self, callback) -> None:
        self.callbacks.append(callback)

    def is_alive(self) -> bool:
        return self.alive

    def close(self) -> None:
        self.alive = False


@pytest.fixture
def fake_jtop(monkeypatch: pytest.MonkeyPatch) -> type[FakeJtopClient]:
    module = types.ModuleType("jtop")
    module.jtop = FakeJtopClient
    monkeypatch.setitem(sys.modules, "jtop", module)
    return FakeJtopClient


def test_reads_rails_and_zones_and_battery_from_sysfs(fake_jtop, host_tree) -> None:
    reader = JtopReader(host_tree("with-ups"))
    readings = reader.read()
    assert readings.source == "jtop"
    assert readings.rails_w == {"VDD_IN": 6.239, "VDD_SOC": 1.499}
    assert readings.zones_c == {"cpu-thermal": 48.5, "tj-thermal": 49.0}
    assert readings.battery_percent == 76


def test_a_silent_jtop_is_missing_not_stale(fake_jtop, host_tree, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = JtopReader(host_tree("orin-nano-devkit"), stale_after_s=5.0)
    now = [1000.0]
    monkeypatch.setattr(jtop_backend.time, "monotonic", lambda: now[0])
    reader._on_update(None)
    now[0] += 6.0
    readings = reader.read()
    assert readings.rails_w == {} and readings.zones_c == {}
    assert "no update" in readings.problems[0]


def test_auto_falls_back_to_sysfs(fake_jtop, host_tree) -> None:
    fake_jtop.service_running = False
    try:
        assert isinstance(open_reader(host_tree("orin-nano-devkit"), "auto"), SysfsReader)
        with pytest.raises(JtopUnavailable, match="does not answer"):
            open_reader(host_tree("with-ups"), "jtop")
    finally:
        fake_jtop.service_running = True


def test_without_jetson_stats(monkeypatch: pytest.MonkeyPatch, host_tree) -> None:
    monkeypatch.setitem(sys.modules, "jtop", None)
    with pytest.raises(JtopUnavailable, match="not installed"):
        JtopReader(host_tree("orin-nano-devkit"))
    assert isinstance(open_reader(host_tree("with-ups")), SysfsReader)
