"""No call in the daemon's single-threaded loop waits on a worker's exit.

A reload that stopped the workers it replaced with `proc.wait` (5 s, then a kill and 5 s more), or a memory
capper's `load` that killed and waited on the worker it replaced, inside the loop, would make every client,
heartbeat and deadline wait behind them. The slow-to-exit worker here is a frozen one (SIGSTOP): it never reads its
shutdown, so a waiting loop would stall the whole 5 s. Measured from outside, as a client sees it: `ping` round
trips while the reload runs. The bound (1 s) is far below such a stall and far above a ping on a loaded 2-core box
(a few ms).
"""

from __future__ import annotations

import os
import signal
import time

import yaml

from tests.support.daemon import SLOW
from tests.support.processes import gone, wait_gone

STALL_BOUND_S = 1.0
STOP_TIMEOUT_S = 5.0  # what the daemon gives a replaced worker before it kills it


def ping_gaps(daemon, seconds: float) -> list[float]:
    """Round trips of `ping`, back to back, for `seconds`."""
    gaps = []
    with daemon.client(timeout_s=30) as client:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.monotonic()
            assert client.call("ping").type == "pong"
            gaps.append(time.monotonic() - started)
    return gaps


def test_a_reload_replacing_a_frozen_worker_does_not_stall_the_loop(start_daemon) -> None:
    pipeline = [{"name": "keep", "plugin": SLOW}, {"name": "change", "plugin": SLOW, "params": {"beam_size": 2}}]
    daemon = start_daemon(pipeline, {"a": ["keep"], "b": ["change"]})
    frozen = {s["name"]: s["pid"] for s in daemon.wait_healthy()["stages"]}["change"]
    config = yaml.safe_load(daemon.config_path.read_text())
    config["pipeline"][1]["params"]["beam_size"] = 3
    daemon.config_path.write_text(yaml.safe_dump(config))
    os.kill(frozen, signal.SIGSTOP)
    try:
        daemon.proc.send_signal(signal.SIGHUP)
        gaps = ping_gaps(daemon, STOP_TIMEOUT_S + 1)
        assert max(gaps) < STALL_BOUND_S, f"the loop stalled {max(gaps):.2f} s"
        with daemon.client() as client:
            assert client.call("a").data["beam_size"] == 1  # the kept worker served throughout
        wait_gone([frozen], timeout_s=STOP_TIMEOUT_S + 5)  # killed once its stop timeout ran out
    finally:
        if not gone(frozen):
            os.kill(frozen, signal.SIGCONT)
    report = daemon.wait_for(lambda r: r["state"] == "healthy" and
                             {s["name"]: s["pid"] for s in r["stages"]}["change"] not in (None, frozen))
    assert all(s["restarts"] == 0 for s in report["stages"]), "a replaced worker's exit is not a crash"
    with daemon.client() as client:
        assert client.call("b").data["beam_size"] == 3
    assert "worker exited" not in daemon.logs()

