"""The worker's lifeline to its daemon: it ends with the daemon, however the daemon ends, and soon after SIGTERM.

A worker that outlives its daemon holds the microphone. Three ways that could happen, and what closes each:

- The daemon dies (SIGKILL, a crash): the kernel sends the worker SIGTERM (PR_SET_PDEATHSIG), set first thing.
  A daemon that died before that took never sends it, so the parent is checked against the pid the spec names,
  at start and then every PARENT_CHECK_S by a thread of the lifeline's own.
- A Python signal handler runs only when the main thread gets back to the interpreter: a worker inside a
  plugin's computation, a blocking PortAudio call or a send nobody takes never ran it, and a handler that only
  sets a flag is never acted on. The signal is therefore also written, in C as it arrives, to a pipe
  (signal.set_wakeup_fd) that the lifeline's thread watches; it asks the worker to stop (`request_stop`, from
  that thread: leave the serve loop, cancel the running request).
- A teardown or an interpreter exit that hangs (PortAudio's terminate under a frozen sound server took 15 s):
  once a stop is asked, by a signal, the daemon gone or the daemon's `shutdown`, the process has STOP_GRACE_S to
  end by itself; then the thread ends it (os._exit). Plugins' teardowns free memory and close devices: what a
  process that exits frees anyway.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import threading
import time
from typing import Protocol

import structlog

PR_SET_PDEATHSIG = 1
PARENT_CHECK_S = 0.5
STOP_GRACE_S = 1.0
FORCED_EXIT_CODE = 1


def die_with_parent(daemon_pid: int) -> bool:
    """Ask for SIGTERM when the parent dies; False when the daemon that wrote the spec is already gone."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    return os.getppid() == daemon_pid


class Stoppable(Protocol):
    """tcccd.worker.process.Worker: asked to stop from the lifeline's thread."""

    def request_stop(self, why: str) -> None: ...


class Lifeline(threading.Thread):
    """Watches SIGTERM and the parent from a thread of its own; ends the process STOP_GRACE_S after a stop."""

    def __init__(self, daemon_pid: int, worker: Stoppable, grace_s: float = STOP_GRACE_S) -> None:
        super().__init__(name="lifeline", daemon=True)
        self.daemon_pid = daemon_pid
        self.worker = worker
        self.grace_s = grace_s
        self.deadline_at: float | None = None
        self._lock = threading.Lock()
        self._wakeup_read, self._wakeup_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.log = structlog.get_logger()

    def start(self) -> None:
        """From the main thread (signal handlers are set there): SIGTERM stops the worker, wherever it is."""
        signal.signal(signal.SIGTERM, lambda *_: self.stopping("SIGTERM"))
        signal.set_wakeup_fd(self._wakeup_write, warn_on_full_buffer=False)
        super().start()

    def stopping(self, why: str) -> None:
        """A stop is asked (any thread, once counts): the worker is told, and the grace period starts."""
        with self._lock:
            if self.deadline_at is not None:
                return
            self.deadline_at = time.monotonic() + self.grace_s
        if why != "shutdown":
            self.log.info("worker stopping", reason=why, grace_s=self.grace_s)
        self.worker.request_stop(why)

    def run(self) -> None:
        while True:
            deadline_at = self.deadline_at
            timeout_s = PARENT_CHECK_S if deadline_at is None else max(0.0, deadline_at - time.monotonic())
            ready, _, _ = select.select([self._wakeup_read], [], [], min(PARENT_CHECK_S, timeout_s))
            if ready and signal.SIGTERM in os.read(self._wakeup_read, 64):
                self.stopping("SIGTERM")
            if os.getppid() != self.daemon_pid:
                self.stopping("the daemon is gone")
            if self.deadline_at is not None and time.monotonic() >= self.deadline_at:
                self.log.warning("worker did not end within its stop grace; exiting without finishing teardown",
                                 grace_s=self.grace_s)
                os._exit(FORCED_EXIT_CODE)
