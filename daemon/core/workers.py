"""What the daemon knows of each worker process and of each stage it hosts.

Plain records, kept by the supervisor: the broker reads them to decide where a
request may go, the status report reads them to tell an operator. Also what a
worker process is started with: its spec file and its environment.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
from dataclasses import dataclass, field
from typing import Any

from tcccd.config import Config, RestartPolicy, StageConfig
from tcccd.system.notify import child_env
from tcccd.wire.states import COMING_UP, WorkerState

THREAD_VARIABLES = ("TCCCD_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass
class StageRuntime:
    """One stage: its config, the parameters it runs with, and its counters (kept by the supervisor)."""

    config: StageConfig
    params: dict[str, Any]
    pending: int = 0
    dropped_audio_chunks: int = 0
    busy_rejections: int = 0
    last_error: str | None = None
    health: dict[str, Any] = field(default_factory=dict)

    @property
    def queue_full(self) -> bool:
        return self.pending >= self.config.max_queue


class WorkerHandle:
    """One worker process (and its generations across restarts)."""

    def __init__(self, name: str, stages: list[StageRuntime]) -> None:
        self.name = name
        self.stages = stages
        self.generation = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.state = WorkerState.STARTING
        self.started_at = 0.0
        self.last_pong_at = 0.0
        self.next_start_at = 0.0
        self.restart_times: collections.deque[float] = collections.deque()
        self.restarts = 0
        self.failed_retries = 0
        self.exit_reason: str | None = None
        self.last_error: str | None = None
        self.info: dict[str, Any] = {}

    @property
    def identity(self) -> bytes:
        return f"{self.name}:{self.generation}".encode()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def limit(self, attr: str) -> float:
        return min(getattr(s.config, attr) for s in self.stages)

    @property
    def policy(self) -> RestartPolicy:
        return self.stages[0].config.restart

    def signature(self) -> list[tuple[Any, ...]]:
        """What a reload compares: a worker whose stages' configs and parameters are unchanged keeps running."""
        return [(s.config.model_dump(mode="json"), s.params) for s in self.stages]

    def prune_restarts(self, now: float) -> None:
        """Forget restarts older than the policy's window: they no longer count against the budget."""
        while self.restart_times and now - self.restart_times[0] > self.policy.window_s:
            self.restart_times.popleft()

    def overdue(self, now: float) -> str | None:
        """Why this live worker must be killed now, or None: frozen, hung past a deadline, or not ready in time."""
        silent_s = now - self.last_pong_at
        hang_s = self.limit("hang_timeout_s")
        busy = self.info.get("busy") or {}
        if silent_s > hang_s:
            return f"frozen: no heartbeat for {silent_s:.1f} s (hang_timeout_s={hang_s:g})"
        if busy.get("overdue_s", 0) > hang_s:
            return (f"hung: still busy with request {busy['request_id']} {busy['overdue_s']:.1f} s after its "
                    f"deadline (hang_timeout_s={hang_s:g}), although it was cancelled")
        start_s = self.limit("start_timeout_s")
        if self.state in COMING_UP and now - self.started_at > start_s:
            return f"not ready within start_timeout_s={start_s:g}"
        return None

    def crashed(self, now: float) -> bool:
        """Count an unexpected exit against the restart budget and schedule the next start; True when this exit
        spent the budget (the worker is failed and retried with the long backoff)."""
        spent = False
        if self.state == WorkerState.FAILED:
            self.failed_retries += 1
        else:
            self.restart_times.append(now)
            self.prune_restarts(now)
            spent = len(self.restart_times) > self.policy.max_restarts
            if spent:
                self.state, self.failed_retries = WorkerState.FAILED, 0
            else:
                self.restarts += 1
                self.state = WorkerState.RESTARTING
        self.next_start_at = now + self.next_backoff_s()
        return spent

    def next_backoff_s(self) -> float:
        """Seconds before the next start: short while the budget lasts, then the capped failed-retry backoff."""
        policy = self.policy
        if self.state == WorkerState.FAILED:
            return min(policy.failed_retry_max_s, policy.failed_retry_initial_s * 2 ** self.failed_retries)
        return min(policy.backoff_max_s, policy.backoff_initial_s * 2 ** (len(self.restart_times) - 1))


def worker_env(handle: WorkerHandle, workers: int) -> dict[str, str]:
    """Thread pools sized for what the box runs at once, so a busy neighbour does not starve a stage.

    A stage's `threads` wins; otherwise the cores are shared out among the workers (at least one each).
    """
    configured = [s.config.threads for s in handle.stages if s.config.threads]
    threads = min(configured) if configured else max(1, _cores() // max(1, workers))
    env = child_env()
    env.update({name: str(threads) for name in THREAD_VARIABLES})
    return env


def worker_spec(handle: WorkerHandle, config: Config, profile: str, endpoints: dict[str, str]) -> dict[str, Any]:
    d = config.daemon
    cpus = next((s.config.cpus for s in handle.stages if s.config.cpus), None)
    return {
        "worker": handle.name, "generation": handle.generation, "profile": profile, **endpoints, "cpus": cpus,
        "daemon_pid": os.getpid(),  # the worker checks its parent against it: it must not outlive the daemon
        "cache_dir": str(d.cache_dir), "state_dir": str(d.state_dir),
        "log_level": d.log_level, "log_format": d.log_format,
        "stages": [{"name": s.config.name, "plugin": s.config.plugin, "params": s.params} for s in handle.stages],
    }


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"
