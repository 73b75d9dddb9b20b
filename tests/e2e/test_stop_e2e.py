"""Stopping tcccd while the microphone listens: it stops at once, and what was heard is transcribed and journalled.

The microphone's stream never ends by itself: a drain that waited for it would take its whole drain_timeout_s
and then abort it, losing what was heard.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time

from tcccd.plugins.capture.virtual_mic import running_pulse
from tests.e2e.test_capture_e2e import ASR, MIC, SAMPLE, capture_health, needs_pulse
from tests.support.processes import STOP_BOUND_S

DRAIN_S = 30.0
HOLDING_MIC = {**MIC, "params": {**MIC["params"], "chunk_ms": 1000}}  # the capture worker holds up to 1 s


def _warnings(log: str) -> list[str]:
    """The daemon's warnings and errors (a reopened stream, an overrun, a dropped span): what a failure shows."""
    return [line for line in log.splitlines() if '"level": "warning"' in line or '"level": "error"' in line]


def listening(report: dict) -> bool:
    """Healthy, the microphone's stream open, and nothing queued (ASR has caught up)."""
    return report["state"] == "healthy" and capture_health(report).get("capture") == "listening" \
        and report["sources"]["open_streams"] == 1 and all(s["queue_depth"] == 0 for s in report["stages"])


@needs_pulse
def test_sigterm_with_only_the_microphone_open_stops_within_2_s(start_daemon) -> None:
    with running_pulse() as pulse:
        daemon = start_daemon([MIC, ASR], {"stream": ["asr"]}, env={"PULSE_SERVER": pulse.server})
        daemon.wait_for(listening, timeout_s=180)
        started = time.monotonic()
        daemon.proc.send_signal(signal.SIGTERM)
        assert daemon.proc.wait(60) == 0
        assert time.monotonic() - started < STOP_BOUND_S


@needs_pulse
def test_sigterm_mid_dictation_journals_what_was_heard_without_waiting_out_the_drain(start_daemon) -> None:
    """ASR may be seconds behind on a loaded machine: the drain waits for it, not for drain_timeout_s (30 s here)."""
    with running_pulse() as pulse:
        daemon = start_daemon([MIC, ASR], {"stream": ["asr"]}, env={"PULSE_SERVER": pulse.server},
                              drain_timeout_s=DRAIN_S)
        daemon.wait_for(listening, timeout_s=180)
        since = time.time()
        pulse.play_file(SAMPLE).wait()  # the utterance has just ended: no silence has closed it yet
        started = time.monotonic()
        daemon.proc.send_signal(signal.SIGTERM)
        assert daemon.proc.wait(60) == 0
        stop_s = time.monotonic() - started
    assert stop_s < DRAIN_S / 2, f"stop took {stop_s:.1f} s"
    warnings = _warnings(daemon.logs())  # before the next daemon writes its own log in the same place

    again = start_daemon([], {})  # same state directory: the journal needs no stage
    again.wait_for(lambda r: r["state"] == "healthy")
    record = json.loads(again.cli("transcripts", "--json", "--since", str(since)).stdout)
    assert [e["source"] for e in record] == ["mic"] and "medevac" in record[0]["text"].lower(), \
        (json.dumps(record), warnings)


@needs_pulse
def test_words_heard_before_the_stop_reach_the_journal_when_the_daemon_lags(start_daemon) -> None:
    """On a loaded machine the daemon reads the microphone's chunks late; a SIGTERM comes before it has.

    Stopped (SIGSTOP) while the medic speaks, the daemon finds the SIGTERM and the whole sentence waiting. A daemon
    that closed the microphone's stream itself would drop every chunk behind the close and journal nothing; the
    capture worker closes its own stream after all it sent, and holds back the end of its last 1 s chunk no more.
    """
    with running_pulse() as pulse:
        daemon = start_daemon([HOLDING_MIC, ASR], {"stream": ["asr"]}, env={"PULSE_SERVER": pulse.server},
                              drain_timeout_s=DRAIN_S)
        daemon.wait_for(listening, timeout_s=180)
        since = time.time()
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            pulse.play_file(SAMPLE).wait()
            daemon.proc.send_signal(signal.SIGTERM)
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
        assert daemon.proc.wait(60) == 0

    again = start_daemon([], {})
    again.wait_for(lambda r: r["state"] == "healthy")
    record = json.loads(again.cli("transcripts", "--json", "--since", str(since)).stdout)
    text = " ".join(e["text"] for e in record).lower()
    assert "medevac" in text and "casualty" in text, record


@needs_pulse
def test_a_capture_worker_that_never_finishes_its_stream_does_not_hold_the_stop(start_daemon) -> None:
    """A hung capture worker is asked to finish and never does: the daemon closes the stream itself soon after."""
    with running_pulse() as pulse:
        daemon = start_daemon([MIC, ASR], {"stream": ["asr"]}, env={"PULSE_SERVER": pulse.server},
                              drain_timeout_s=DRAIN_S)
        report = daemon.wait_for(listening, timeout_s=180)
        mic_pid = next(s["pid"] for s in report["stages"] if s["name"] == "mic")
        os.kill(mic_pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            daemon.proc.send_signal(signal.SIGTERM)
            assert daemon.proc.wait(60) == 0
            stop_s = time.monotonic() - started
        finally:
            with contextlib.suppress(ProcessLookupError):  # the daemon's stop killed it
                os.kill(mic_pid, signal.SIGCONT)
    assert stop_s < DRAIN_S / 2, f"stop took {stop_s:.1f} s"
    assert "source did not finish its stream" in daemon.logs()
