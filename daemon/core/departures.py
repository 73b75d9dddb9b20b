"""Worker processes on their way out: told to shut down (or killed), then reaped by the loop, never waited on.

A worker replaced by a reload, unloaded by the memory capper, or killed to be loaded again leaves through here.
Its handle lets go of the process at once, so its exit is not mistaken for a crash (no restart, no
`worker_lost`), and a new process for the same worker starts only once the old one is gone (a device or the
memory it holds is free by then). The main loop polls these processes (`reap`) instead of waiting on them, so
a worker that does not read its shutdown never holds up clients and heartbeats; one that has not exited by its
deadline is killed.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass

import structlog

from tcccd.core.workers import WorkerHandle, WorkerLinks
from tcccd.wire.control import Shutdown

KILL_WAIT_S = 5.0  # after SIGKILL, how long a shutdown still waits for the kernel to reap a process
POLL_S = 0.02


@dataclass
class Departure:
    worker: str
    proc: subprocess.Popen[bytes]
    kill_at: float
    killed: bool = False


class Departures:
    def __init__(self, links: WorkerLinks) -> None:
        self.links = links
        self.leaving: list[Departure] = []
        self.log = structlog.get_logger()

    def retire(self, handle: WorkerHandle, timeout_s: float, kill: bool = False) -> None:
        """Take the process off its handle and tell it to shut down (or kill it now); killed after `timeout_s`."""
        proc, handle.proc = handle.proc, None
        if proc is None or proc.poll() is not None:
            return
        departure = Departure(handle.name, proc, time.monotonic() + timeout_s)
        if kill:
            self._kill(departure)
        else:
            self.links.send(handle, Shutdown().message())
        self.leaving.append(departure)

    def pending(self, worker: str) -> bool:
        """A process of this worker is still on its way out: its successor starts after it."""
        return any(d.worker == worker for d in self.leaving)

    def hurry(self, worker: str) -> None:
        """Its successor is wanted now (a request waits for it): the idle leaving process is killed at once."""
        for departure in self.leaving:
            if departure.worker == worker and not departure.killed:
                self._kill(departure)

    def reap(self, now: float) -> None:
        """From the loop: forget the processes that exited, kill the ones past their deadline."""
        for departure in list(self.leaving):
            if departure.proc.poll() is not None:
                self.leaving.remove(departure)
            elif now >= departure.kill_at and not departure.killed:
                self.log.warning("worker did not exit in time; killed", worker=departure.worker,
                                 pid=departure.proc.pid)
                self._kill(departure)

    def wait_all(self, timeout_s: float) -> None:
        """At shutdown only, after the loop: until every process is gone, killing what is left at `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        for departure in self.leaving:
            departure.kill_at = min(departure.kill_at, deadline)
        while self.leaving and time.monotonic() < deadline + KILL_WAIT_S:
            self.reap(time.monotonic())
            time.sleep(POLL_S)

    @staticmethod
    def _kill(departure: Departure) -> None:
        departure.killed = True
        departure.proc.kill()
