"""Starting, watching and restarting worker processes.

Modelled on gunicorn's arbiter and jupyter_client's restarter: a worker must say
`ready` within its start timeout and answer heartbeats within its hang timeout,
or it is killed; a worker that exits is restarted with exponential backoff until
its restart budget (N restarts within a window) is spent, and then its stages
are marked failed while the daemon stays up, degraded.
"""

from __future__ import annotations

import collections
import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
import zmq

from tcccd.config import Config, StageConfig
from tcccd.notify import child_env
from tcccd.protocol import Message


@dataclass
class StageRuntime:
    """What the daemon knows of one stage; the broker keeps the counters."""

    config: StageConfig
    params: dict[str, Any]
    pending: int = 0
    dropped_audio_chunks: int = 0
    busy_rejections: int = 0
    last_error: str | None = None
    health: dict[str, Any] = field(default_factory=dict)


class WorkerHandle:
    def __init__(self, name: str, stages: list[StageRuntime]) -> None:
        self.name = name
        self.stages = stages
        self.generation = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.state = "starting"
        self.started_at = 0.0
        self.last_pong_at = 0.0
        self.next_start_at = 0.0
        self.restart_times: collections.deque[float] = collections.deque()
        self.restarts = 0
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
    def policy(self) -> Any:
        return self.stages[0].config.restart

    def prune_restarts(self, now: float) -> None:
        """Forget restarts older than the policy's window: they no longer count against the budget."""
        while self.restart_times and now - self.restart_times[0] > self.policy.window_s:
            self.restart_times.popleft()


class Supervisor:
    def __init__(self, config: Config, params: dict[str, dict[str, Any]], profile: str,
                 on_worker_lost: Callable[[WorkerHandle, str], None]) -> None:
        self.on_worker_lost = on_worker_lost
        self.log = structlog.get_logger()
        run = config.daemon.runtime_dir
        self.data_endpoint = f"ipc://{run}/workers-data.sock"
        self.control_endpoint = f"ipc://{run}/workers-control.sock"
        self.heartbeat_endpoint = f"ipc://{run}/workers-heartbeat.sock"
        self._build(config, params, profile)

    def _build(self, config: Config, params: dict[str, dict[str, Any]], profile: str) -> None:
        self.config = config
        self.profile = profile
        self.stages: dict[str, StageRuntime] = {}
        self.workers: dict[str, WorkerHandle] = {}
        groups: dict[str, list[StageRuntime]] = {}
        for stage in config.enabled_stages:
            runtime = StageRuntime(stage, params[stage.name])
            self.stages[stage.name] = runtime
            groups.setdefault(stage.worker_name, []).append(runtime)
        for name, stages in groups.items():
            self.workers[name] = WorkerHandle(name, stages)
        self._worker_by_stage = {s.config.name: w for w in self.workers.values() for s in w.stages}
        self.stopping = False
        self._last_ping_at = 0.0

    def reconfigure(self, config: Config, params: dict[str, dict[str, Any]], profile: str) -> None:
        """A reloaded config: stop every worker, then start the new pipeline with fresh restart budgets."""
        self.stop_all(timeout_s=5.0)
        self._build(config, params, profile)
        self.start_all()

    def bind(self, ctx: zmq.Context) -> None:
        self.data = ctx.socket(zmq.ROUTER)
        self.control = ctx.socket(zmq.ROUTER)
        self.heartbeat = ctx.socket(zmq.ROUTER)
        for sock, endpoint in ((self.data, self.data_endpoint), (self.control, self.control_endpoint),
                               (self.heartbeat, self.heartbeat_endpoint)):
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
            sock.bind(endpoint)

    def worker_of(self, stage: str) -> WorkerHandle:
        return self._worker_by_stage[stage]

    def handle_by_identity(self, identity: bytes) -> WorkerHandle | None:
        name, _, gen = identity.decode(errors="replace").rpartition(":")
        handle = self.workers.get(name)
        return handle if handle is not None and str(handle.generation) == gen else None

    def spawn(self, handle: WorkerHandle) -> None:
        handle.generation += 1
        spec = self._worker_spec(handle)
        spec_path = self.config.daemon.runtime_dir / f"worker-{handle.name}.json"
        spec_path.write_text(json.dumps(spec))
        handle.proc = subprocess.Popen([sys.executable, "-m", "tcccd.worker", str(spec_path)],
                                       stdin=subprocess.DEVNULL, env=child_env())
        handle.state = "starting" if handle.restarts == 0 else "restarting"
        handle.started_at = handle.last_pong_at = time.monotonic()
        handle.exit_reason = None
        handle.info = {"pid": handle.proc.pid}
        self.log.info("worker started", worker=handle.name, pid=handle.proc.pid, generation=handle.generation)

    def _worker_spec(self, handle: WorkerHandle) -> dict[str, Any]:
        d = self.config.daemon
        return {
            "worker": handle.name, "generation": handle.generation, "profile": self.profile,
            "data_endpoint": self.data_endpoint, "control_endpoint": self.control_endpoint,
            "heartbeat_endpoint": self.heartbeat_endpoint,
            "cache_dir": str(d.cache_dir), "state_dir": str(d.state_dir),
            "log_level": d.log_level, "log_format": d.log_format,
            "stages": [{"name": s.config.name, "plugin": s.config.plugin, "params": s.params} for s in handle.stages],
        }

    def start_all(self) -> None:
        for handle in self.workers.values():
            self.spawn(handle)

    def send_control(self, handle: WorkerHandle, message: Message, sock: zmq.Socket | None = None) -> None:
        # Not connected yet, or gone: the heartbeat deadline catches a dead worker.
        with contextlib.suppress(zmq.ZMQError):
            (sock or self.control).send_multipart([handle.identity, *message.to_frames()], zmq.NOBLOCK)

    def tick(self, now: float) -> None:
        for handle in self.workers.values():
            handle.prune_restarts(now)
            if handle.proc is not None and handle.proc.poll() is not None:
                self._on_exit(handle, handle.proc.returncode, now)
            elif handle.proc is None and handle.state == "restarting" and now >= handle.next_start_at:
                self.spawn(handle)
            elif handle.alive:
                self._check_deadlines(handle, now)
        if now - self._last_ping_at >= self.config.daemon.heartbeat_interval_s:
            self._last_ping_at = now
            for handle in self.workers.values():
                if handle.alive:
                    self.send_control(handle, Message("ping"), self.heartbeat)

    def _check_deadlines(self, handle: WorkerHandle, now: float) -> None:
        silent_s = now - handle.last_pong_at
        hang_s = handle.limit("hang_timeout_s")
        busy = handle.info.get("busy") or {}
        if silent_s > hang_s:
            self.kill(handle, f"frozen: no heartbeat for {silent_s:.1f} s (hang_timeout_s={hang_s:g})")
        elif busy.get("overdue_s", 0) > hang_s:
            self.kill(handle, f"hung: still busy with request {busy['request_id']} {busy['overdue_s']:.1f} s "
                              f"after its deadline (hang_timeout_s={hang_s:g})")
        elif handle.state in ("starting", "restarting") and now - handle.started_at > handle.limit("start_timeout_s"):
            self.kill(handle, f"not ready within start_timeout_s={handle.limit('start_timeout_s'):g}")

    def kill(self, handle: WorkerHandle, reason: str) -> None:
        if handle.alive and handle.proc is not None:
            handle.exit_reason = reason
            self.log.warning("killing worker", worker=handle.name, reason=reason)
            handle.proc.kill()

    def _on_exit(self, handle: WorkerHandle, returncode: int, now: float) -> None:
        handle.proc = None
        reason = handle.exit_reason or _describe_exit(returncode)
        handle.last_error = reason
        if self.stopping:
            handle.state = "stopped"
            return
        self.log.error("worker exited", worker=handle.name, reason=reason, returncode=returncode)
        self.on_worker_lost(handle, reason)
        policy = handle.policy
        handle.restart_times.append(now)
        handle.prune_restarts(now)
        if len(handle.restart_times) > policy.max_restarts:
            handle.state = "failed"
            self.log.error("worker failed for good: restart budget spent", worker=handle.name,
                           restarts=handle.restarts, window_s=policy.window_s)
            return
        handle.restarts += 1
        backoff_s = min(policy.backoff_max_s, policy.backoff_initial_s * 2 ** (len(handle.restart_times) - 1))
        handle.state = "restarting"
        handle.next_start_at = now + backoff_s

    def on_control(self, frames: list[bytes]) -> None:
        handle = self.handle_by_identity(frames[0])
        if handle is None:
            return  # a message from a worker generation that has since been replaced
        message = Message.from_frames(frames[1:])
        if message.type == "ready":
            handle.state = "degraded" if handle.restart_times else "ready"
            self._take_health(handle, message.data)
            self.log.info("worker ready", worker=handle.name, pid=message.data.get("pid"))
        elif message.type == "setup_failed":
            handle.exit_reason = f"set-up failed: {message.data.get('error')}"
        elif message.type == "profile_applied" and message.data.get("errors"):
            self.log.error("profile not applied", worker=handle.name, errors=message.data["errors"])

    def on_heartbeat(self, frames: list[bytes]) -> None:
        handle = self.handle_by_identity(frames[0])
        if handle is None:
            return
        handle.last_pong_at = time.monotonic()
        self._take_health(handle, Message.from_frames(frames[1:]).data)
        if handle.state == "degraded" and not handle.restart_times:
            handle.state = "ready"

    def _take_health(self, handle: WorkerHandle, data: dict[str, Any]) -> None:
        handle.info = {k: v for k, v in data.items() if k != "stages"}
        for name, health in data.get("stages", {}).items():
            if name in self.stages:
                self.stages[name].health = health

    def heartbeats_healthy(self, now: float, grace_s: float) -> bool:
        """True while every live worker's heartbeat answers: what WATCHDOG=1 vouches for.

        A frozen worker stops it; a worker busy with a long job does not (its heartbeat thread answers).
        """
        return all(now - h.last_pong_at <= grace_s for h in self.workers.values() if h.alive)

    def settled(self) -> bool:
        """Every worker either ready or failed for good: start-up is over."""
        return all(h.state in ("ready", "degraded", "failed") for h in self.workers.values())

    def stop_all(self, timeout_s: float) -> None:
        self.stopping = True
        for handle in self.workers.values():
            if handle.alive:
                self.send_control(handle, Message("shutdown"))
        deadline = time.monotonic() + timeout_s
        for handle in self.workers.values():
            if handle.proc is None:
                continue
            try:
                handle.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                handle.proc.kill()
                handle.proc.wait(5)
            handle.state = "stopped"


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"

