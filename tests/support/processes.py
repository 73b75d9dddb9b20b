"""Waiting for processes to be gone, as someone looking at `ps` would check it."""

from __future__ import annotations

import os
import signal
import time

import psutil

# A worker ends 1 s (the lifeline's STOP_GRACE_S) after it is told to stop; 1 s more of slack for a loaded machine.
STOP_BOUND_S = 2.0


def gone(pid: int) -> bool:
    """Exited (a zombie not reaped by whoever adopted it counts: it holds nothing)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(pids: list[int], timeout_s: float) -> float:
    """Seconds until every pid is gone; fails (and kills what is left) after timeout_s."""
    started = time.monotonic()
    while not all(gone(pid) for pid in pids):
        if time.monotonic() - started > timeout_s:
            running = [pid for pid in pids if not gone(pid)]
            for pid in running:
                os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"still running {timeout_s} s later: {running}")
        time.sleep(0.02)
    return time.monotonic() - started
