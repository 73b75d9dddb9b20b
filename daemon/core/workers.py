"""What the daemon knows of each worker process and of each stage it hosts, and the sockets that reach them.

Plain records, kept by the roster (tcccd.core.roster) and updated by the
supervisor: the broker reads them to decide where a request may go, the status
report reads them to tell an operator. Also what a worker process is started
with (its spec file and its environment), and the three sockets to the workers.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from tcccd.config import Config, RestartPolicy, StageConfig
from tcccd.system.notify import child_env
from tcccd.wire.protocol import Message
from tcccd.wire.states import COMING_UP, WorkerState
from tcccd.wire.status import PluginHealth

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
    health: PluginHealth = field(default_factory=PluginHealth)

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
        self.answered = False  # this generation has answered a heartbeat
        self.next_start_at = 0.0
        self.restart_times: collections.deque[float] = collections.deque()
        self.restarts = 0
        self.failed_retries = 0
        self.exit_reason: str | None = None
        self.last_error: str | None = None
        self.info: dict[str, Any] = {}

    @property
    def identity(self) -> bytes:
        """`name:daemon_pid.generation`: unique to this daemon too, since a worker of a daemon that was killed may
        still be connected to the same runtime directory's sockets for a moment and must not take the new one's
        place (a ROUTER refuses a second peer with an identity it holds)."""
        return f"{self.name}:{os.getpid()}.{self.generation}".encode()

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
        """Why this live worker must be killed now, or None: frozen, hung past a deadline, or not ready in time.

        A process still starting has no heartbeat thread until its imports are done (seconds for torch on a
        loaded machine): until it first answers, or says ready, start_timeout_s judges it, not hang_timeout_s."""
        silent_s = now - self.last_pong_at
        hang_s = self.limit("hang_timeout_s")
        busy = self.info.get("busy") or {}
        if silent_s > hang_s and (self.answered or self.state not in COMING_UP):
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
        "worker": handle.name, "identity": handle.identity.decode(), "profile": profile, **endpoints, "cpus": cpus,
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


ROLES = ("data", "control", "heartbeat")


class WorkerLinks:
    """The daemon's three sockets to its workers, one per role, as in jupyter_client.

    `data` carries requests and their outputs; `control` carries readiness, profile
    switches, memory releases and shutdown; `heartbeat` carries pings (answered by a
    thread of the worker's own, so a long computation is not a hang) and cancels
    (read by that thread at once, so a running plugin can stop cooperatively). All
    three are ROUTERs over ipc:// in the runtime directory; a worker's DEALERs carry
    its identity (`WorkerHandle.identity`), so messages of a replaced generation are
    recognised and ignored.
    """

    def __init__(self, runtime_dir: Path) -> None:
        self.endpoints = {role: f"ipc://{runtime_dir}/workers-{role}.sock" for role in ROLES}
        self.sockets: dict[str, zmq.Socket] = {}

    def bind(self, ctx: zmq.Context) -> None:
        for role, endpoint in self.endpoints.items():
            sock = ctx.socket(zmq.ROUTER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.ROUTER_MANDATORY, 1)  # a worker not connected (yet, or any more) raises
            sock.bind(endpoint)
            self.sockets[role] = sock

    @property
    def data(self) -> zmq.Socket:
        return self.sockets["data"]

    @property
    def control(self) -> zmq.Socket:
        return self.sockets["control"]

    @property
    def heartbeat(self) -> zmq.Socket:
        return self.sockets["heartbeat"]

    def spec(self) -> dict[str, str]:
        """The endpoints as a worker's spec file names them."""
        return {f"{role}_endpoint": endpoint for role, endpoint in self.endpoints.items()}

    def send_data(self, handle: WorkerHandle, message: Message) -> bool:
        """A request message for one of the worker's stages; False when the worker is not connected."""
        try:
            self.data.send_multipart([handle.identity, *message.to_frames()], zmq.NOBLOCK)
        except zmq.ZMQError:
            return False
        return True

    def send(self, handle: WorkerHandle, message: Message, role: str = "control") -> None:
        """A control or heartbeat message. Not connected yet, or gone: the heartbeat deadline catches a dead
        worker, so a lost message here is not an error."""
        with contextlib.suppress(zmq.ZMQError):
            self.sockets[role].send_multipart([handle.identity, *message.to_frames()], zmq.NOBLOCK)
