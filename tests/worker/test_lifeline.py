"""A worker never outlives its daemon and ends soon after SIGTERM, wherever its main thread is.

A SIGTERM that only set a flag for the serve loop would never be read by a worker inside a plugin that does not
return, so neither a SIGTERM nor the daemon's death (PR_SET_PDEATHSIG sends SIGTERM) would end it: the lifeline's
own thread acts on both.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcccd.wire.protocol import Message
from tests.support.daemon import SLOW
from tests.support.processes import STOP_BOUND_S, wait_gone
from tests.support.raw_worker import RawWorker
from tests.support.rawclient import RawClient, header


@pytest.fixture
def hung_worker(tmp_path: Path):
    """A worker whose plugin is inside a request that never returns."""
    worker = RawWorker(tmp_path, [{"name": "slow", "plugin": SLOW, "params": {}}])
    assert worker.receive("control", 60).type == "ready"
    worker.send("data", Message("hang", id="r1", stage="slow", final=True))
    time.sleep(0.5)
    yield worker
    worker.close()


def test_sigterm_ends_a_worker_whose_plugin_never_returns(hung_worker: RawWorker) -> None:
    started = time.monotonic()
    hung_worker.proc.send_signal(signal.SIGTERM)
    hung_worker.proc.wait(30)
    assert time.monotonic() - started < STOP_BOUND_S
    events = [(line["event"], line.get("reason")) for line in hung_worker.log_lines()]
    assert ("worker stopping", "SIGTERM") in events


def test_a_worker_whose_daemon_died_before_it_started_exits(tmp_path: Path) -> None:
    """The death signal is set in the worker: a daemon that died before that never sends it."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    worker = RawWorker(tmp_path, [{"name": "slow", "plugin": SLOW, "params": {}}], daemon_pid=dead.pid)
    try:
        assert worker.proc.wait(60) == 0
        assert any(line["event"].startswith("the daemon that started this worker is gone")
                   for line in worker.log_lines())
    finally:
        worker.close()


def test_a_sigkilled_daemons_workers_go_with_it_even_one_inside_a_plugin(start_daemon) -> None:
    daemon = start_daemon([{"name": "a", "plugin": SLOW}, {"name": "b", "plugin": SLOW}],
                          {"hang": ["a"], "echo": ["b"]})
    report = daemon.wait_healthy()
    pids = [stage["pid"] for stage in report["stages"]]
    with RawClient(daemon.endpoint) as client:
        client.send(header("hang", "h1", final=True, deadline_s=600))
        daemon.wait_for(lambda r: r["requests_in_flight"] == 1)
        time.sleep(0.5)  # the hang has reached the plugin
        daemon.proc.kill()
        daemon.proc.wait(10)
        wait_gone(pids, timeout_s=3 * STOP_BOUND_S)
