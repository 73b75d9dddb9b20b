"""Partials beside the stream: when one starts, when it is skipped, and that a final abandons it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import structlog
import structlog.testing

from tcccd.plugins.whisper.stage.partials import MAX_LAG_S, PartialCounts, PartialSchedule

RATE_HZ = 16000


@pytest.fixture
def pool():
    with ThreadPoolExecutor(max_workers=1) as executor:
        yield executor


def test_lag_is_how_far_chunks_come_behind_the_streams_best_pace():
    schedule = PartialSchedule(PartialCounts())
    assert schedule.note_chunk(0.1, now_s=100.1) == 0.0
    assert schedule.note_chunk(0.2, now_s=100.2) == pytest.approx(0.0)  # on time
    assert schedule.note_chunk(0.3, now_s=100.25) == pytest.approx(0.0)  # faster than real time: a new best
    assert schedule.note_chunk(0.4, now_s=100.95) == pytest.approx(0.6)  # this chunk waited 0.6 s


def test_a_partial_is_due_after_the_interval_and_as_much_new_audio():
    schedule = PartialSchedule(PartialCounts())
    assert not schedule.due(500, RATE_HZ // 4, RATE_HZ, 0.0, now_s=10.0)  # 250 ms of audio
    assert schedule.due(500, RATE_HZ // 2, RATE_HZ, 0.0, now_s=10.0)
    schedule.started_at_s, schedule.started_samples = 10.0, RATE_HZ // 2
    schedule.finished_at_s, schedule.cost_s = 10.1, 0.1
    assert not schedule.due(500, RATE_HZ, RATE_HZ, 0.0, now_s=10.4)  # 400 ms since the last one started
    assert schedule.due(500, RATE_HZ, RATE_HZ, 0.0, now_s=10.5)


def test_the_cadence_stretches_to_what_the_machine_sustains():
    """A partial that took 1.2 s: the next waits 1.2 s after it ended, not the 300 ms asked for."""
    schedule = PartialSchedule(PartialCounts())
    schedule.started_at_s, schedule.finished_at_s, schedule.cost_s = 10.0, 11.2, 1.2
    assert not schedule.due(300, 3 * RATE_HZ, RATE_HZ, 0.0, now_s=12.0)
    assert schedule.due(300, 3 * RATE_HZ, RATE_HZ, 0.0, now_s=12.4)


def test_no_partial_starts_while_the_stream_is_behind_and_the_skips_are_counted():
    counts = PartialCounts()
    schedule = PartialSchedule(counts)
    assert not schedule.due(300, RATE_HZ, RATE_HZ, MAX_LAG_S + 0.1, now_s=10.0)
    assert counts.skipped_behind == 1
    assert schedule.due(300, RATE_HZ, RATE_HZ, 0.05, now_s=10.0)


def test_a_finished_partial_is_given_once_and_only_for_its_own_utterance(pool):
    counts = PartialCounts()
    schedule = PartialSchedule(counts)
    schedule.start(pool, lambda audio, check: f"{len(audio)} samples", np.zeros(800, np.float32), utterance=3)
    schedule.pending.result(timeout=5)
    assert schedule.take(open_utterance=3) == "800 samples" and schedule.take(open_utterance=3) is None
    schedule.start(pool, lambda audio, check: "old", np.zeros(800, np.float32), utterance=3)
    schedule.pending.result(timeout=5)
    assert schedule.take(open_utterance=4) is None  # its utterance had its final meanwhile
    assert counts.done == 2 and not schedule.due(10_000, 0, RATE_HZ, 0.0)


def test_a_final_abandons_the_partial_in_flight_at_its_next_check(pool):
    counts = PartialCounts()
    schedule = PartialSchedule(counts)
    running, stopped = threading.Event(), threading.Event()

    def decode(audio, check):
        running.set()
        try:
            while True:  # a decoder's steps, each checking whether to go on
                check()
                threading.Event().wait(0.01)
        finally:
            stopped.set()

    schedule.start(pool, decode, np.zeros(16000, np.float32), utterance=0)
    assert running.wait(5)
    schedule.abandon()
    assert stopped.wait(5) and counts.abandoned == 1 and schedule.pending is None
    assert schedule.take(open_utterance=0) is None


def test_a_partial_that_fails_raises_in_the_stream(pool):
    schedule = PartialSchedule(PartialCounts())

    def decode(audio, check):
        raise ValueError("model broke")

    schedule.start(pool, decode, np.zeros(800, np.float32), utterance=0)
    with pytest.raises(ValueError, match="model broke"):
        while schedule.take(open_utterance=0) is None:
            threading.Event().wait(0.01)


def test_the_stream_logs_and_counts_a_failed_partial_and_goes_on(pool):
    """In the stream a failed partial is a lost preview: the fresh-clone run of 2026-11-25 lost a talk-over's
    transcript when one raised into the stream and closed it."""
    counts = PartialCounts()
    schedule = PartialSchedule(counts)

    def decode(audio, check):
        raise ValueError("model broke")

    schedule.start(pool, decode, np.zeros(800, np.float32), utterance=0)
    while not schedule.pending.done():
        threading.Event().wait(0.01)
    with structlog.testing.capture_logs() as logs:
        assert schedule.take_logged(open_utterance=0, log=structlog.get_logger()) is None
    assert counts.failed == 1 and counts.as_health()["partials_failed"] == 1 and schedule.pending is None
    [entry] = logs
    assert entry["log_level"] == "error" and "model broke" in repr(entry["exc_info"])
