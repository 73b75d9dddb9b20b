"""Every shipped trace replayed: the exact decisions, and the fewest switches the trace allows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcccd.telemetry.replay import TraceError, format_decision, read_trace, replay
from tcccd.telemetry.settings import TelemetrySettings

DATA = Path(__file__).resolve().parents[1] / "data" / "telemetry"

EXPECTED = {
    "discharge.csv": [(3600, "field", "battery_percent", 40.0), (4800, "training", "battery_percent", 20.0)],
    "thermal_spike.csv": [(71, "field", "hottest_c", 75.0), (109, "training", "hottest_c", 85.0),
                          (272, "field", "hottest_c", 75.3), (312, "emergency", "hottest_c", 58.2)],
    "oscillating.csv": [(3, "field", "battery_percent", 39.5), (710, "emergency", "battery_percent", 50.0)],
    "sensor_lost.csv": [(0, "field", "hottest_c", 78.0), (240, "emergency", "hottest_c", 60.0)],
}


@pytest.mark.parametrize("trace", sorted(EXPECTED))
def test_decision_sequence(trace: str) -> None:
    decisions = replay(read_trace(DATA / trace), TelemetrySettings(), "emergency")
    assert [(d.at, d.effective, d.reading, d.value) for d in decisions] == EXPECTED[trace]


def test_noise_around_a_threshold_switches_once_each_way() -> None:
    samples = read_trace(DATA / "oscillating.csv")
    crossings = sum(1 for a, b in zip(samples, samples[1:], strict=False)
                    if (a.values["battery_percent"] <= 40) != (b.values["battery_percent"] <= 40))
    assert crossings > 50, "the trace must really oscillate across the threshold"
    assert len(replay(samples, TelemetrySettings(), "emergency")) == 2


def test_replay_printout() -> None:
    decisions = replay(read_trace(DATA / "discharge.csv"), TelemetrySettings(), "field")
    assert [format_decision(d) for d in decisions] == [
        "t=  4800.0 s  training   battery_percent reached 20% (<= 20%): capped at training"]


@pytest.mark.parametrize(("text", "message"), [
    ("time,battery\n1,2\n", "the header must have t_s and at least one of battery_percent, hottest_c"),
    ("t_s,battery_percent\n0,50\nsoon,40\n", ":3: could not convert string to float"),
    ("t_s,hottest_c\n5,50\n4,50\n", ":3: t_s goes backwards (4 after 5)"),
])
def test_bad_trace_says_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "trace.csv"
    path.write_text(text)
    with pytest.raises(TraceError, match=None) as error:
        read_trace(path)
    assert message in str(error.value)


def test_missing_trace_file(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot read"):
        read_trace(tmp_path / "nope.csv")
