"""The capture worker ends promptly however it is told to, even with PortAudio stuck under it (issue 21).

A frozen sound server (SIGSTOP on the private PulseAudio) is what a hung audio stack looks like from the
worker: PortAudio's abort, close and terminate block. Before the lifeline, a SIGTERM then took 15 s here, and
a worker orphaned by a killed daemon held the microphone.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tcccd.wire.protocol import Message
from tests.support.processes import STOP_BOUND_S, wait_gone
from tests.support.raw_worker import RawWorker

MIC = {"name": "mic", "plugin": "capture", "params": {}}
DICTATION = {"name": "asr", "plugin": "tests.support.stage_plugins:Dictation"}


def listening_worker(tmp_path: Path) -> RawWorker:
    worker = RawWorker(tmp_path, [MIC])
    try:
        assert worker.receive("control", 60).type == "ready"
        assert worker.receive("data", 20).type == "stream"  # the microphone delivers
    except BaseException:
        worker.close()  # its sockets left open would block the test run's exit in zmq's context teardown
        raise
    return worker


def test_sigterm_ends_a_listening_capture_worker(pulse, tmp_path: Path) -> None:
    worker = listening_worker(tmp_path)
    try:
        started = time.monotonic()
        worker.proc.send_signal(signal.SIGTERM)
        worker.proc.wait(30)
        assert time.monotonic() - started < STOP_BOUND_S
    finally:
        worker.close()


def test_sigterm_ends_the_capture_worker_inside_a_frozen_sound_server(pulse, tmp_path: Path) -> None:
    worker = listening_worker(tmp_path)
    os.kill(pulse.proc.pid, signal.SIGSTOP)
    try:
        time.sleep(0.5)
        started = time.monotonic()
        worker.proc.send_signal(signal.SIGTERM)
        worker.proc.wait(60)
        assert time.monotonic() - started < STOP_BOUND_S
    finally:
        os.kill(pulse.proc.pid, signal.SIGCONT)
        worker.close()


def test_a_sigkilled_daemon_frees_the_microphone(pulse, start_daemon) -> None:
    daemon = start_daemon([MIC, DICTATION], {"stream": ["asr"]}, env={"PULSE_SERVER": pulse.server})
    report = daemon.wait_for(lambda r: r["state"] == "healthy" and r["sources"]["open_streams"] == 1, timeout_s=60)
    pids = [stage["pid"] for stage in report["stages"]]
    daemon.proc.send_signal(signal.SIGTERM)  # a drain has begun (the microphone's stream is open) ...
    time.sleep(0.3)
    daemon.proc.kill()  # ... when the daemon is killed
    daemon.proc.wait(10)
    wait_gone(pids, timeout_s=3 * STOP_BOUND_S)


def test_the_daemons_shutdown_still_tears_the_stage_down(pulse, tmp_path: Path) -> None:
    """The grace is a bound, not the way out: a worker told to shut down exits cleanly (code 0), in time."""
    worker = listening_worker(tmp_path)
    try:
        started = time.monotonic()
        worker.send("control", Message("shutdown"))
        assert worker.proc.wait(30) == 0
        assert time.monotonic() - started < STOP_BOUND_S
    finally:
        worker.close()


def test_sigterm_with_only_the_microphone_open_stops_at_once(pulse, start_daemon) -> None:
    """The microphone's stream never ends by itself: the drain closes it instead of waiting drain_timeout_s (10 s)
    for it, and the stage behind it finishes the stream (its closing reply, not an abort) before the daemon exits."""
    daemon = start_daemon([MIC, DICTATION], {"stream": ["asr"]}, env={"PULSE_SERVER": pulse.server})
    daemon.wait_for(lambda r: r["state"] == "healthy" and r["sources"]["open_streams"] == 1, timeout_s=60)
    started = time.monotonic()
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.proc.wait(30) == 0
    assert time.monotonic() - started < STOP_BOUND_S
    assert "stopped before this request finished" not in daemon.logs()
