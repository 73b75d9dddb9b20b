"""Starting, watching and restarting worker processes, and the sockets that reach them.

Modelled on gunicorn's arbiter and jupyter_client's restarter: a worker must say
`ready` within its start timeout and answer heartbeats within its hang timeout,
or it is killed; a worker that exits is restarted with exponential backoff until
its restart budget (N restarts within a window) is spent. Its stages are then
marked failed while the daemon stays up, degraded, and the worker is retried
with a capped exponential backoff (`restart.failed_retry_*`): a missing model
file or a full disk gets fixed, and the stage must come back without a restart
of the whole daemon.

The supervisor owns the worker records and each stage's counters (queue depth,
busy rejections, dropped chunks): other parts read them and change them only
through its methods. The broker decides where a message goes; `send_to_stage`
sends it and counts it. A worker that exits is queued as lost (`take_losses`)
for the daemon's loop to act on, as gunicorn's arbiter reaps its children: the
supervisor supervises and calls out to nobody.
"""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import time
from typing import Any

import structlog

from tcccd.config import Config
from tcccd.core.departures import Departures
from tcccd.core.roster import Roster
from tcccd.core.workers import WorkerHandle, WorkerLinks, describe_exit, worker_env, worker_spec
from tcccd.wire.control import Cancel, Control, ControlInvalid, Ping, Ready, read_pong
from tcccd.wire.protocol import Message, ProtocolError
from tcccd.wire.states import SERVING, SETTLED, WorkerState

STOP_TIMEOUT_S = 5.0  # a worker told to shut down is killed after this
WAITING_TO_START = (WorkerState.STARTING, WorkerState.LOADING, WorkerState.RESTARTING, WorkerState.FAILED)


class Supervisor:
    def __init__(self, config: Config, profile: str, roster: Roster, links: WorkerLinks) -> None:
        self.log = structlog.get_logger()
        self.config = config
        self.profile = profile
        self.roster = roster
        self.links = links
        self.departures = Departures(links)
        self._lost: collections.deque[tuple[WorkerHandle, str]] = collections.deque()
        self.stopping = False
        self._last_ping_at = 0.0

    def reconfigure(self, config: Config, params: dict[str, dict[str, Any]], profile: str) -> set[str]:
        """A reloaded config: only workers whose stages changed are restarted; returns their stage names."""
        self.config, self.profile = config, profile
        old = self.roster.build(config, params)
        workers = self.roster.workers()
        changed: set[str] = set()
        fresh: list[WorkerHandle] = []
        for name, handle in list(workers.items()):
            before = old.pop(name, None)
            if before is not None and before.signature() == handle.signature() and before.alive:
                for kept, new in zip(before.stages, handle.stages, strict=True):
                    kept.config = new.config
                workers[name] = before
                continue
            changed |= {s.config.name for s in handle.stages}
            if before is not None:
                changed |= {s.config.name for s in before.stages}
                handle.generation = before.generation  # the next identity is new: the old one may linger
                self.departures.retire(before, STOP_TIMEOUT_S)
            fresh.append(handle)
        self.roster.use(workers)
        for handle in fresh:
            self._start_when_free(handle)
        for gone in old.values():
            changed |= {s.config.name for s in gone.stages}
            self.departures.retire(gone, STOP_TIMEOUT_S)
        return changed

    def take_losses(self) -> list[tuple[WorkerHandle, str]]:
        """Workers that exited since the last call, with why: the daemon's loop tells the parts that care."""
        lost = list(self._lost)
        self._lost.clear()
        return lost

    # -- sending ----------------------------------------------------------------------------------------------

    def send_to_stage(self, stage: str, message: Message) -> bool:
        """Hand a message to the worker hosting `stage`; counts it as queued. False when it cannot go."""
        if not self.links.send_data(self.roster.worker_of(stage), message):
            return False
        self.roster.queued(stage)
        return True

    def send_control(self, handle: WorkerHandle, control: Control) -> None:
        """A control message to one worker (a profile, a release, finish_streams); not connected: dropped."""
        self.links.send(handle, control.message())

    def cancel(self, request_id: str, stages: list[str]) -> None:
        """Tell the workers of `stages` that a request ended early.

        It travels on the heartbeat socket, whose thread in the worker reads it at once even while the main
        thread computes, so the plugin can stop cooperatively (PluginContext.check_cancelled).
        """
        workers = {self.roster.worker_of(s).name: self.roster.worker_of(s) for s in stages if self.roster.has_stage(s)}
        for handle in workers.values():
            self.links.send(handle, Cancel(request_id=request_id).message(), "heartbeat")

    def on_worker_output(self, frames: list[bytes]) -> tuple[WorkerHandle, Message] | None:
        """A worker's data message, or None for a replaced generation's or an unreadable one. Acks are counted."""
        handle = self.roster.by_identity(frames[0])
        if handle is None:
            return None
        try:
            message = Message.from_frames(frames[1:])
        except ProtocolError as exc:
            self.log.error("unreadable message from a worker", worker=handle.name, error=str(exc))
            return None
        if message.type == "ack":
            self.roster.acknowledged(message.stage)
            return None
        return handle, message

    # -- processes ---------------------------------------------------------------------------------------------

    def spawn(self, handle: WorkerHandle) -> None:
        """A new process (generation) for the worker; its state says why (starting, restarting, loading, failed)."""
        handle.generation += 1
        spec_path = self.config.daemon.runtime_dir / f"worker-{handle.name}.json"
        spec_path.write_text(json.dumps(worker_spec(handle, self.config, self.profile, self.links.spec())))
        handle.proc = subprocess.Popen([sys.executable, "-m", "tcccd.worker", str(spec_path)],
                                       stdin=subprocess.DEVNULL, env=worker_env(handle, len(self.roster.handles())))
        if handle.state not in (WorkerState.FAILED, WorkerState.LOADING):
            handle.state = WorkerState.STARTING if handle.restarts == 0 else WorkerState.RESTARTING
        handle.started_at = handle.last_pong_at = time.monotonic()
        handle.answered = False
        handle.exit_reason = None
        handle.info = {"pid": handle.proc.pid}
        self.log.info("worker started", worker=handle.name, pid=handle.proc.pid, generation=handle.generation)

    def start_all(self) -> None:
        for handle in self.roster.handles():
            self.spawn(handle)

    def _start_when_free(self, handle: WorkerHandle) -> None:
        """Start the worker now, or from `tick` once its previous process is gone."""
        handle.next_start_at = 0.0
        if not self.departures.pending(handle.name):
            self.spawn(handle)

    def tick(self, now: float) -> None:
        self.departures.reap(now)
        for handle in self.roster.handles():
            handle.prune_restarts(now)
            if handle.proc is not None and handle.proc.poll() is not None:
                self._on_exit(handle, handle.proc.returncode, now)
            elif handle.proc is None and handle.state in WAITING_TO_START and now >= handle.next_start_at \
                    and not self.departures.pending(handle.name):
                self.spawn(handle)
            elif handle.alive and (overdue := handle.overdue(now)):
                self.kill(handle, overdue)
        if now - self._last_ping_at >= self.config.daemon.heartbeat_interval_s:
            self._last_ping_at = now
            for handle in self.roster.handles():
                if handle.alive:
                    self.links.send(handle, Ping().message(), "heartbeat")

    def kill(self, handle: WorkerHandle, reason: str) -> None:
        if handle.alive and handle.proc is not None:
            handle.exit_reason = reason
            self.log.warning("killing worker", worker=handle.name, reason=reason)
            handle.proc.kill()

    def _on_exit(self, handle: WorkerHandle, returncode: int, now: float) -> None:
        handle.proc = None
        reason = handle.exit_reason or describe_exit(returncode)
        handle.last_error = reason
        for stage in handle.stages:
            stage.pending = 0  # what was queued in the dead process is gone with it
        if self.stopping:
            handle.state = WorkerState.STOPPED
            return
        self.log.error("worker exited", worker=handle.name, reason=reason, returncode=returncode)
        self._lost.append((handle, reason))
        if handle.crashed(now):
            self.log.error("restart budget spent: stage failed, retried with a long backoff",
                           worker=handle.name, restarts=handle.restarts, window_s=handle.policy.window_s)

    def on_ready(self, handle: WorkerHandle, ready: Ready) -> None:
        """A worker's stages are set up and warmed: it serves (degraded while restarts are fresh)."""
        if handle.state == WorkerState.FAILED:
            handle.restart_times.clear()  # it came back after its budget was spent: a fresh budget
        handle.state = WorkerState.DEGRADED if handle.restart_times else WorkerState.READY
        handle.failed_retries = 0
        self.roster.take_health(handle, ready)
        self.log.info("worker ready", worker=handle.name, pid=ready.pid)

    def on_setup_failed(self, handle: WorkerHandle, error: str) -> None:
        """A stage could not set up; the worker exits next and is restarted with this as the reason."""
        handle.exit_reason = f"set-up failed: {error}"

    def on_heartbeat(self, frames: list[bytes]) -> None:
        handle = self.roster.by_identity(frames[0])
        if handle is None:
            return
        try:
            pong = read_pong(Message.from_frames(frames[1:]))
        except (ProtocolError, ControlInvalid) as exc:
            self.log.error("unreadable heartbeat from a worker", worker=handle.name, error=str(exc))
            return
        handle.last_pong_at, handle.answered = time.monotonic(), True
        self.roster.take_health(handle, pong)
        if handle.state == WorkerState.DEGRADED and not handle.restart_times:
            handle.state = WorkerState.READY

    def heartbeats_healthy(self, now: float, grace_s: float) -> bool:
        """True while every live worker's heartbeat answers: what WATCHDOG=1 vouches for.

        A frozen worker stops it; a worker busy with a long job does not (its heartbeat thread answers).
        """
        return all(now - h.last_pong_at <= grace_s for h in self.roster.handles() if h.alive)

    def all_failed(self) -> bool:
        """Every stage has spent its restart budget: nothing serves, a daemon restart is the next remedy."""
        return bool(self.roster.handles()) and all(h.state == WorkerState.FAILED for h in self.roster.handles())

    def settled(self) -> bool:
        """Every worker either ready or failed: start-up is over."""
        return all(h.state in SETTLED for h in self.roster.handles())

    # -- unloading idle workers for the memory capper ----------------------------------------------------------

    def unload(self, handle: WorkerHandle) -> bool:
        """Stop an idle worker to give its memory back; `load` starts it again when a request needs it."""
        if not handle.alive or handle.state not in SERVING:
            return False
        handle.state = WorkerState.UNLOADED
        self.departures.retire(handle, STOP_TIMEOUT_S)
        self.log.info("worker unloaded", worker=handle.name)
        return True

    def load(self, handle: WorkerHandle) -> None:
        """Start an unloaded worker again (state `loading` until it says ready); no-op in any other state.

        A process of it still on its way out is idle: it is killed, and the new one starts once it is gone."""
        if handle.state != WorkerState.UNLOADED:
            return
        handle.state = WorkerState.LOADING
        self.departures.hurry(handle.name)
        self._start_when_free(handle)

    def commit_params(self, params: dict[str, dict[str, Any]], profile: str) -> None:
        """A profile switch every worker accepted: restarts from now on start with these parameters."""
        self.profile = profile
        self.roster.commit_params(params)

    def stop_all(self, timeout_s: float) -> None:
        """At shutdown, after the loop: every worker told to go, and waited for (killed after `timeout_s`)."""
        self.stopping = True
        for handle in self.roster.handles():
            self.departures.retire(handle, timeout_s)
            handle.state = WorkerState.STOPPED
        self.departures.wait_all(timeout_s)
