"""The capper's ladder decided from readings alone: cheapest action first, dearer ones only when needed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tcccd.memory.budget import MIB, MemorySettings
from tcccd.memory.policy import CapperState, Readings, WorkerUse, decide, over_budget, record

SETTINGS = MemorySettings(settle_s=2.0, release_cooldown_s=15.0, idle_before_unload_s=20.0)
BUDGET = 1000 * MIB


def worker(name: str, used_mb: int, share_mb: int = 500, idle_s: float | None = 60.0,
           loaded: bool = True) -> WorkerUse:
    return WorkerUse(name, used_mb * MIB, share_mb * MIB, idle_s, loaded)


def readings(used_mb: int, *workers: WorkerUse, next_profile: str | None = None,
             pressure: float | None = None, available_mb: int | None = None) -> Readings:
    return Readings(BUDGET, used_mb * MIB, workers, 8000 * MIB, None if available_mb is None else available_mb * MIB,
                    pressure, next_profile)


def run(r: Readings, state: CapperState, now: float):
    decision = decide(r, state, SETTINGS, now)
    if decision is not None:
        record(decision, state, r, now)
    return decision


def test_within_budget_and_shares_nothing_happens() -> None:
    assert decide(readings(600, worker("asr", 400), worker("tts", 150)), CapperState(), SETTINGS, 100.0) is None


def test_worker_past_its_share_is_asked_to_release_even_within_budget() -> None:
    state = CapperState()
    r = readings(700, worker("asr", 560, share_mb=450), worker("tts", 100, share_mb=450))
    decision = run(r, state, 100.0)
    assert decision is not None and decision.action == "release" and decision.targets == ("asr",)
    assert "asr 560/450 MiB" in decision.reason
    assert run(r, state, 110.0) is None  # within the cooldown
    assert run(r, state, 200.0) is None  # no growth since it was asked: its working set, not waste
    grown = readings(750, worker("asr", 620, share_mb=450), worker("tts", 100, share_mb=450))
    assert run(grown, state, 201.0).targets == ("asr",)


def test_close_to_the_budget_every_worker_is_asked_to_release() -> None:
    decision = decide(readings(900, worker("asr", 450), worker("tts", 300)), CapperState(), SETTINGS, 100.0)
    assert decision is not None and decision.action == "release" and decision.targets == ("asr", "tts")


def test_over_budget_the_ladder_climbs_one_rung_per_settle_time() -> None:
    state = CapperState()
    busy_asr, idle_tts = worker("asr", 800, idle_s=None), worker("tts", 300, idle_s=45.0)
    r = readings(1150, busy_asr, idle_tts, next_profile="training")
    assert run(r, state, 100.0).action == "release"
    assert run(r, state, 101.0) is None  # the release gets settle_s to show
    unload = run(r, state, 102.5)
    assert (unload.action, unload.targets) == ("unload", ("tts",))  # the idle one, never the busy one
    r = readings(1100, busy_asr, worker("tts", 0, idle_s=None, loaded=False), next_profile="training")
    step = run(r, state, 105.0)
    assert (step.action, step.targets) == ("step_down", ("training",))
    r = readings(1100, busy_asr, worker("tts", 0, idle_s=None, loaded=False))
    assert run(r, state, 108.0).action == "refuse" and state.refusing
    assert run(r, state, 111.0) is None  # nothing dearer is left


def test_refusal_is_lifted_only_below_the_resume_line() -> None:
    state = CapperState(refusing=True)
    still_high = run(readings(950, worker("asr", 800, share_mb=900)), state, 100.0)  # under budget, over 90%
    assert still_high.action == "release" and state.refusing
    decision = run(readings(850, worker("asr", 700, share_mb=900)), state, 101.0)
    assert decision.action == "resume" and not state.refusing


def test_only_workers_idle_long_enough_are_unloaded_longest_idle_first() -> None:
    state = CapperState(last_action_at=0.0, released_at={"a": 95.0, "b": 95.0, "c": 95.0})
    r = readings(1200, worker("a", 300, idle_s=5.0), worker("b", 300, idle_s=30.0), worker("c", 300, idle_s=90.0))
    assert decide(r, state, SETTINGS, 100.0).targets == ("c",)
    r = readings(1200, worker("a", 300, idle_s=5.0), next_profile="field")
    assert decide(r, state, SETTINGS, 100.0).action == "step_down"


def test_pressure_and_low_available_memory_count_as_over_budget() -> None:
    assert "pressure" in over_budget(readings(500, pressure=41.3), SETTINGS)
    assert over_budget(readings(500, pressure=3.0), SETTINGS) is None
    assert "available" in over_budget(readings(500, available_mb=200), SETTINGS)
    state = CapperState(released_at={"asr": 99.0})
    decision = decide(readings(500, worker("asr", 400, idle_s=None), pressure=41.3), state, SETTINGS, 100.0)
    assert decision.action == "refuse" and "stalled 41.3%" in decision.reason


def test_profile_may_unload_idle_plugins_within_budget() -> None:
    economical = SETTINGS.model_copy(update={"unload_idle_after_s": 60.0})
    r = readings(300, worker("asr", 200, idle_s=None), worker("tts", 80, idle_s=75.0))
    assert decide(r, CapperState(), economical, 100.0).targets == ("tts",)
    assert decide(r, CapperState(), SETTINGS, 100.0) is None


def test_unloaded_workers_are_neither_released_nor_unloaded() -> None:
    state = CapperState()
    r = readings(1200, worker("asr", 0, loaded=False, idle_s=500.0), next_profile=None)
    assert run(r, state, 100.0).action == "refuse"


mb = st.integers(min_value=0, max_value=3000)
workers = st.lists(st.builds(worker, st.sampled_from(["a", "b", "c", "d"]), mb, mb,
                             st.one_of(st.none(), st.floats(0, 1000)), st.booleans()),
                   max_size=4, unique_by=lambda w: w.name)


@given(mb, workers, st.one_of(st.none(), st.floats(0, 100)), st.booleans(), st.floats(0, 1000))
def test_the_ladder_never_harms_work_in_flight(used_mb: int, ws: list[WorkerUse], pressure: float | None,
                                               refusing: bool, now: float) -> None:
    """Whatever the readings: a busy or unloaded worker is never unloaded, work is refused only when over
    budget, and nothing is refused twice."""
    r = readings(used_mb, *ws, pressure=pressure)
    decision = decide(r, CapperState(refusing=refusing), SETTINGS, now)
    if decision is None:
        return
    by_name = {w.name: w for w in ws}
    if decision.action == "unload":
        target = by_name[decision.targets[0]]
        assert target.loaded and target.idle_s is not None
    if decision.action == "release":
        assert all(by_name[t].loaded for t in decision.targets)
    if decision.action == "refuse":
        assert not refusing and over_budget(r, SETTINGS) is not None
    if decision.action == "resume":
        assert refusing and used_mb * MIB <= BUDGET
