"""The cap policy: thresholds, hysteresis, dwell, missing readings and operator overrides."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tcccd.telemetry.policy import CapPolicy
from tcccd.telemetry.settings import TelemetrySettings

SETTINGS = TelemetrySettings()


def feed(policy: CapPolicy, rows: list[tuple[float, float | None, float | None]]) -> list[tuple[float, str]]:
    decisions = []
    for t_s, battery, hottest in rows:
        decision = policy.update({"battery_percent": battery, "hottest_c": hottest}, t_s)
        if decision:
            decisions.append((t_s, decision.effective))
    return decisions


def test_battery_caps_step_down_and_lift_after_dwell() -> None:
    policy = CapPolicy(SETTINGS, "emergency")
    rows = [(0, 50, 50), (1, 40, 50), (2, 25, 50), (3, 20, 50), (4, 30, 50),
            (5, 45, 50), (64, 44.9, 50), (65, 45, 50), (124, 46, 50), (125, 46, 50)]
    # training lifts 60 s after 30% (>= 25); field's dwell restarts when 44.9% dips under 45%
    assert feed(policy, rows) == [(1, "field"), (3, "training"), (64, "field"), (125, "emergency")]


def test_decision_names_the_reading_and_value() -> None:
    policy = CapPolicy(SETTINGS, "field")
    decision = policy.update({"battery_percent": 61.0, "hottest_c": 86.5}, 10.0)
    assert decision is not None
    assert (decision.effective, decision.requested, decision.cap) == ("training", "field", "training")
    assert (decision.reading, decision.value) == ("hottest_c", 86.5)
    assert "hottest_c reached 86.5 C (>= 85 C)" in decision.reason
    assert decision.readings == {"battery_percent": 61.0, "hottest_c": 86.5}


def test_a_cap_above_the_request_changes_nothing() -> None:
    policy = CapPolicy(SETTINGS, "training")
    assert feed(policy, [(0, 10, 90), (100, 100, 30)]) == []
    assert policy.current.effective == "training"


def test_missing_reading_neither_caps_nor_lifts() -> None:
    policy = CapPolicy(SETTINGS, "emergency")
    assert feed(policy, [(0, None, None), (10, None, None)]) == []
    # capped by a real reading, then the sensor vanishes: the cap holds and the dwell starts over on return
    rows = [(20, 35, None), (30, 60, None), (85, None, None), (100, 60, None), (159, 60, None), (160, 60, None)]
    assert feed(policy, rows) == [(20, "field"), (160, "emergency")]


def test_override_bypasses_caps_until_it_expires() -> None:
    policy = CapPolicy(SETTINGS, "field")
    assert feed(policy, [(0, 15, 50)]) == [(0, "training")]
    decision = policy.request("emergency", 10.0, for_s=1800)
    assert decision is not None and decision.effective == "emergency"
    assert decision.override_until == 1810.0 and "override" in decision.reason
    assert feed(policy, [(11, 10, 90), (1809, 10, 90)]) == []
    expired = policy.update({"battery_percent": 10, "hottest_c": 90}, 1810.0)
    assert expired is not None and (expired.effective, expired.requested) == ("training", "field")


def test_plain_request_is_capped_and_clears_an_override() -> None:
    policy = CapPolicy(SETTINGS, "field")
    policy.update({"battery_percent": 30, "hottest_c": None}, 0.0)
    policy.request("training", 1.0, for_s=60)
    decision = policy.request("emergency", 2.0)
    assert decision is not None and (decision.requested, decision.effective) == ("emergency", "field")
    assert policy.override is None


def test_unknown_profile_counts_as_fastest() -> None:
    policy = CapPolicy(SETTINGS, "quiet-night")
    decision = policy.update({"battery_percent": 39, "hottest_c": None}, 0.0)
    assert decision is not None and decision.effective == "field"


def test_thresholds_come_from_the_settings() -> None:
    settings = TelemetrySettings(battery_field_percent=60, dwell_s=0, battery_margin_percent=0)
    policy = CapPolicy(settings, "emergency")
    assert feed(policy, [(0, 59, None), (1, 61, None)]) == [(0, "field"), (1, "emergency")]


@pytest.mark.parametrize("bad", [{"battery_training_percent": 50, "battery_field_percent": 40},
                                 {"thermal_training_c": 70, "thermal_field_c": 75},
                                 {"profile_order": ["field", "emergency"]},
                                 {"interval_s": 5}])
def test_inconsistent_settings_are_refused(bad: dict) -> None:
    with pytest.raises(ValidationError):
        TelemetrySettings(**bad)


readings_strategy = st.lists(st.tuples(st.one_of(st.none(), st.floats(0, 100)),
                                       st.one_of(st.none(), st.floats(20, 110))), max_size=80)


@given(readings_strategy, st.sampled_from(["training", "field", "emergency"]))
def test_properties_over_any_readings(rows: list[tuple[float | None, float | None]], requested: str) -> None:
    policy = CapPolicy(TelemetrySettings(dwell_s=3), requested)
    present: set[str] = set()
    for t_s, (battery, hottest) in enumerate(rows):
        values = {"battery_percent": battery, "hottest_c": hottest}
        present |= {name for name, value in values.items() if value is not None}
        decision = policy.update(values, float(t_s))
        current = policy.current
        assert policy.rank(current.effective) <= policy.rank(requested), "a cap never raises the profile"
        if battery is not None and battery <= 20 or hottest is not None and hottest >= 85:
            assert current.effective == "training", "a training cap applies on the reading that crosses"
        if decision is not None and decision.cap is not None:
            # A cap names a reading that was present when it started; it may be missing now (a missing reading
            # never lifts a cap), e.g. a thermal cap still binding after a battery cap lifted.
            assert decision.reading in present, "only a present reading can start a cap"


@given(readings_strategy)
def test_missing_readings_alone_never_cap(rows: list[tuple[float | None, float | None]]) -> None:
    policy = CapPolicy(TelemetrySettings(), "emergency")
    for t_s, _ in enumerate(rows):
        assert policy.update({"battery_percent": None, "hottest_c": None}, float(t_s)) is None
    assert policy.current.effective == "emergency"
