"""The worker process: hosts one or more stages and serves them over ZeroMQ.

Started by the supervisor as `python -m tcccd.worker SPEC.json` (tcccd.worker.__main__), in a fresh
interpreter (not a fork), so it imports only what its own plugins need. One
DEALER socket per role: `data` for requests and their outputs, `control` for
readiness, profile switches and shutdown (served first, also between the
outputs of a long request), and `heartbeat`, answered by its own thread
(tcccd.worker.heartbeat) so that a long computation is never mistaken for a hang.
Cancels travel on the heartbeat socket too: its thread marks the running
request's CancelScope at once, and the main thread, between two outputs or
when the plugin calls context.check_cancelled(), stops the work.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import structlog
import zmq

from tcccd.kit.plugin import CancelScope
from tcccd.kit.stage import Stage
from tcccd.memory import release
from tcccd.wire import control as ctl
from tcccd.wire.protocol import Message, ProtocolError
from tcccd.worker.heartbeat import Busy, HeartbeatThread

SNAPSHOT_MAX_AGE_S = 0.25
CANCELLED_REMEMBERED = 1024
POLL_INTERVAL_S = 0.25  # a source stage is polled at least this often (device retries, a lost device)


class Worker:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.identity = spec["identity"].encode()  # built by the daemon
        self.ctx = zmq.Context()
        self.data = self._connect(spec["data_endpoint"])
        self.control = self._connect(spec["control_endpoint"])
        self.stages: dict[str, Stage] = {}
        self.running = True
        self.log = structlog.get_logger()
        self.busy: Busy | None = None
        self.release_wanted = False  # the capper asked while a request ran: released after it
        self.snapshot: dict[str, Any] = {"pid": os.getpid()}
        self.snapshot_at = 0.0
        self.scope: CancelScope | None = None
        self._cancel_lock = threading.Lock()
        self._cancelled: OrderedDict[str, bool] = OrderedDict()  # id -> plugin.cancel() already called
        self.heartbeat = HeartbeatThread(self.ctx, spec["heartbeat_endpoint"], self.identity, self)

    def health_snapshot(self) -> dict[str, Any]:
        """Heartbeat thread: the latest snapshot (replaced whole by the main thread, never changed in place)."""
        return self.snapshot

    def busy_now(self) -> Busy | None:
        return self.busy

    def on_cancel(self, request_id: str) -> None:
        """Heartbeat thread: a request ended early. Mark it; the main thread does the plugin's cleanup."""
        with self._cancel_lock:
            self._cancelled.setdefault(request_id, False)
            while len(self._cancelled) > CANCELLED_REMEMBERED:
                self._cancelled.popitem(last=False)
        scope = self.scope
        if scope is not None and scope.request_id == request_id:
            scope.cancel("the daemon ended it (deadline, client cancel, idle stream or shutdown)")

    def request_stop(self, why: str) -> None:
        """Any thread (the lifeline's on SIGTERM or a dead daemon): leave the serve loop, end the running request."""
        self.running = False
        scope = self.scope
        if scope is not None:
            scope.cancel(f"the worker is stopping ({why})")

    def forget_cancelled(self) -> None:
        """Main thread: let every stage drop the state of cancelled requests (flat memory for long runs)."""
        with self._cancel_lock:
            todo = [rid for rid, done in self._cancelled.items() if not done]
            for rid in todo:
                self._cancelled[rid] = True
        for rid in todo:
            for stage in self.stages.values():
                stage.plugin.cancel(rid)

    def _connect(self, endpoint: str) -> zmq.Socket:
        sock = self.ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.IDENTITY, self.identity)
        sock.setsockopt(zmq.LINGER, 1000)
        sock.connect(endpoint)
        return sock

    def send_control(self, control: ctl.Control) -> None:
        self.control.send_multipart(control.message().to_frames())

    def start_stages(self) -> None:
        structlog.contextvars.bind_contextvars(profile=self.spec["profile"])
        for spec in self.spec["stages"]:
            stage = Stage(spec["name"], spec["plugin"], spec["params"], cache_dir=Path(self.spec["cache_dir"]),
                          state_dir=Path(self.spec["state_dir"]), profile=self.spec["profile"])
            stage.start()
            self.stages[stage.name] = stage
        self.refresh_snapshot()
        self.send_control(ctl.Ready(**self.snapshot))

    def refresh_snapshot(self, max_age_s: float = 0.0) -> None:
        """Health as the heartbeat thread reports it; computed here, on the thread that owns the stages.

        After a message it is refreshed at most every SNAPSHOT_MAX_AGE_S: it costs a /proc read and a sort,
        which back-to-back requests should not wait for.
        """
        now = time.monotonic()
        if now - self.snapshot_at < max_age_s:
            return
        self.snapshot_at = now
        mem = psutil.Process().memory_info()
        self.snapshot = {"pid": os.getpid(), "rss_bytes": mem.rss, "peak_rss_bytes": _peak_rss_bytes(),
                         "gpu_bytes": release.gpu_allocator_bytes(),
                         "stages": {name: stage.health() for name, stage in self.stages.items()}}

    def serve(self) -> None:
        poller = zmq.Poller()
        poller.register(self.control, zmq.POLLIN)
        poller.register(self.data, zmq.POLLIN)
        sources = [s for s in self.stages.values() if s.plugin.wakeup_fd() is not None]
        for stage in sources:
            poller.register(stage.plugin.wakeup_fd(), zmq.POLLIN)
        while self.running:
            events = dict(poller.poll(POLL_INTERVAL_S * 1000 if sources else 1000))
            self.forget_cancelled()
            if self.control in events:
                self.drain_control()
            elif self.data in events:
                self.handle_data(self.data.recv_multipart())
            elif not sources:
                self.refresh_snapshot()
            for stage in sources:  # unsolicited output (a microphone) goes out as it comes, between requests
                self.send_unsolicited(stage)

    def send_unsolicited(self, stage: Stage) -> None:
        for out in stage.poll():
            self.data.send_multipart(out.to_frames())
        self.refresh_snapshot(SNAPSHOT_MAX_AGE_S)

    def finish_streams(self) -> None:
        """The daemon is stopping: each source sends what it heard up to now and closes its stream."""
        for stage in self.stages.values():
            if stage.plugin.wakeup_fd() is not None:
                stage.finish_streams()
                self.send_unsolicited(stage)

    def drain_control(self) -> None:
        """Control messages waiting; one the daemon garbled is logged and skipped, never fatal, never mid-request."""
        while self.running and self.control.poll(0):
            try:
                control = ctl.read_control(Message.from_frames(self.control.recv_multipart()))
            except (ProtocolError, ctl.ControlInvalid) as exc:
                self.log.error("unreadable control message from the daemon", error=str(exc))
                continue
            self.on_control(control)

    def on_control(self, control: ctl.Control) -> None:
        if isinstance(control, ctl.ApplyProfile):
            self.apply_profile(control)
        elif isinstance(control, ctl.Shutdown):
            self.running = False
        elif isinstance(control, ctl.FinishStreams):
            self.finish_streams()
        elif isinstance(control, ctl.Release):
            self.release_wanted = True
            if self.busy is None:
                self.release_memory()
        else:
            self.log.error("control message a worker does not take", type=control.TYPE)

    def release_memory(self) -> None:
        """The memory capper's request: plugins free their caches, then the heap is trimmed; say what it freed.

        Never between the outputs of a request, where a plugin still uses what it would free.
        """
        self.release_wanted = False
        result = release.release((name, stage.plugin) for name, stage in self.stages.items())
        self.send_control(ctl.Released(**result))
        self.refresh_snapshot()

    def apply_profile(self, switch: ctl.ApplyProfile) -> None:
        """All of this worker's stages take the profile, or none does (the ones done are put back)."""
        profile, errors = switch.profile, {}
        done: list[tuple[str, dict[str, Any], str]] = []
        for name, params in switch.params.items():
            stage = self.stages.get(name)
            if stage is None:
                continue
            before = (stage.plugin.params.model_dump(), stage.plugin.context.profile)
            error = stage.apply_profile(params, profile)
            if error:
                errors[name] = error
                break
            done.append((name, *before))
        if errors:
            for name, params, old_profile in reversed(done):
                self.stages[name].apply_profile(params, old_profile)
        else:
            structlog.contextvars.bind_contextvars(profile=profile)
        self.send_control(ctl.ProfileApplied(profile=profile, txn=switch.txn, errors=errors))

    def handle_data(self, frames: list[bytes]) -> None:
        try:
            message = Message.from_frames(frames)
        except ProtocolError as exc:
            self.log.error("bad message from daemon", error=str(exc))
            return
        stage = self.stages.get(message.stage or "")
        if stage is None:
            error = message.error("no_stage", f"stage {message.stage!r} is not in this worker "
                                              f"(it hosts {', '.join(self.stages)})")
            self.data.send_multipart(replace(error, stage=message.stage).to_frames())
        elif message.id not in self._cancelled:  # the daemon already answered a cancelled request
            now = time.monotonic()
            deadline_at = now + message.deadline_s if message.deadline_s else None
            self.busy = Busy(stage.name, message.id, now, deadline_at)
            self.scope = CancelScope(message.id, deadline_at)
            try:
                self.send_outputs(stage, message, self.scope)
            finally:
                self.busy = self.scope = None
                self.refresh_snapshot(SNAPSHOT_MAX_AGE_S)
            if self.release_wanted:
                self.release_memory()
        self.data.send_multipart(Message("ack", id=message.id, stage=message.stage).to_frames())

    def send_outputs(self, stage: Stage, message: Message, scope: CancelScope) -> None:
        for out in stage.handle(message, scope):
            try:
                frames = out.to_frames()
            except (TypeError, ValueError) as exc:  # an output that cannot be encoded: a plugin bug, not a crash
                self.log.error("plugin output could not be encoded", request_id=message.id, exc_info=True)
                if not out.final:
                    continue
                error = message.error("plugin_error", f"{stage.plugin_cls.name} produced an output that cannot be "
                                                      f"sent: {exc}")
                frames = replace(error, stage=stage.name).to_frames()
            self.data.send_multipart(frames)
            self.drain_control()

    def stop(self) -> None:
        self.heartbeat.stop()
        for stage in self.stages.values():
            try:
                stage.stop()
            except Exception:  # noqa: BLE001 - teardown of one stage must not block the others
                self.log.warning("teardown failed", stage=stage.name, exc_info=True)
        self.ctx.destroy(linger=500)


def _peak_rss_bytes() -> int:
    """VmHWM: the peak resident set, what the 8 GB budget cares about."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
