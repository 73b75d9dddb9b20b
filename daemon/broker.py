"""Routing client requests through chains of stages, and the promise behind it.

The promise: every accepted request ends with exactly one final reply to its
client, a result or an error, before its deadline. The broker keeps a table of
open requests; a reply that ends one removes it, and a deadline, a dead worker
or shutdown ends the rest with an error that says what happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import structlog
import zmq

from tcccd.config import Config
from tcccd.protocol import Message, ProtocolError
from tcccd.supervisor import StageRuntime, Supervisor, WorkerHandle


@dataclass
class Request:
    id: str
    client: bytes
    type: str
    route: list[str]
    deadline_at: float
    accepted_at: float


class Broker:
    def __init__(self, config: Config, supervisor: Supervisor, publish: Callable[[str, Message], None],
                 on_error: Callable[[str, str], None]) -> None:
        self.config = config
        self.supervisor = supervisor
        self.publish = publish
        self.on_error = on_error
        self.requests: dict[str, Request] = {}
        self.accepting = True
        self.late_outputs = 0
        self.log = structlog.get_logger()

    def bind(self, ctx: zmq.Context) -> None:
        self.clients = ctx.socket(zmq.ROUTER)
        self.clients.setsockopt(zmq.LINGER, 500)
        self.clients.bind(self.config.daemon.client_endpoint)

    def reply(self, client: bytes, message: Message) -> None:
        try:
            self.clients.send_multipart([client, *message.to_frames()])
        except zmq.ZMQError as exc:
            self.log.warning("reply not delivered", request_id=message.id, error=str(exc))

    def parse_client(self, frames: list[bytes]) -> Message | None:
        """The client's message, or None after replying with what was wrong."""
        client = frames[0]
        try:
            message = Message.from_frames(frames[1:])
        except ProtocolError as exc:
            self.reply(client, Message("error", id="-", data={"code": "bad_message", "message": str(exc)}, final=True))
            return None
        size = len(message.payload or b"")
        if size > self.config.daemon.max_request_bytes:
            self.reply(client, message.error("too_large", f"payload of {size} bytes is over max_request_bytes="
                                                          f"{self.config.daemon.max_request_bytes}; stream it instead"))
            return None
        return message

    def on_client(self, client: bytes, message: Message) -> None:
        """A message for a routed request type (local types are the daemon's)."""
        request = self.requests.get(message.id)
        if request is None:
            request = self._accept(client, message)
            if request is None:
                return
        elif request.client != client:
            self.reply(client, message.error("bad_request", f"request id {message.id} belongs to another client"))
            return
        stage = self.supervisor.stages[request.route[0]]
        if message.seq > 0 and stage.pending >= stage.config.max_queue:
            self._drop_chunk(request, stage, message)
            return
        self._forward(stage, message)

    def _accept(self, client: bytes, message: Message) -> Request | None:
        route = self.config.routes.get(message.type)
        problem = self._refusal(message, route)
        if problem:
            self.reply(client, message.error(*problem))
            return None
        assert route is not None
        now = time.monotonic()
        deadline_s = message.deadline_s or self.config.daemon.default_deadline_s
        request = Request(message.id, client, message.type, route, now + deadline_s, now)
        self.requests[message.id] = request
        return request

    def _refusal(self, message: Message, route: list[str] | None) -> tuple[str, str] | None:
        if not self.accepting:
            return "shutting_down", "tcccd is stopping and takes no new requests"
        if route is None:
            return "no_route", _no_route_text(message.type, self.config)
        for name in route:  # every stage of the chain must be able to take it, not only the first
            problem = self._stage_refusal(name)
            if problem:
                return problem
        runtime = self.supervisor.stages[route[0]]
        if runtime.pending >= runtime.config.max_queue:
            runtime.busy_rejections += 1
            return "busy", (f"stage {route[0]!r} has {runtime.pending} messages queued "
                            f"(max_queue={runtime.config.max_queue}); retry later")
        return None

    def _stage_refusal(self, name: str) -> tuple[str, str] | None:
        runtime = self.supervisor.stages.get(name)
        if runtime is None:
            return "stage_disabled", f"stage {name!r} is disabled; set enabled: true for it in the config"
        handle = self.supervisor.worker_of(name)
        if handle.state == "failed":
            return "stage_failed", (f"stage {name!r} (plugin {runtime.config.plugin}) has failed: "
                                    f"{handle.last_error}; fix the cause, then reload tcccd")
        if handle.state not in ("ready", "degraded"):
            return "unavailable", f"stage {name!r} is {handle.state}; retry in a few seconds"
        return None

    def _drop_chunk(self, request: Request, stage: StageRuntime, message: Message) -> None:
        """Live audio that cannot be queued is dropped, counted and reported, never lost silently."""
        stage.dropped_audio_chunks += 1
        text = f"stage {stage.config.name!r} is behind: audio chunk seq {message.seq} dropped"
        self.reply(request.client, message.error("busy", text, final=False))
        if message.final:
            self._forward(stage, replace(message, payload=b""))

    def _forward(self, stage: StageRuntime, message: Message) -> None:
        """Send to the stage's worker, with the time left until the request's deadline."""
        handle = self.supervisor.worker_of(stage.config.name)
        request = self.requests[message.id]
        left_s = max(0.001, request.deadline_at - time.monotonic())
        frames = replace(message, stage=stage.config.name, deadline_s=round(left_s, 3)).to_frames()
        try:
            self.supervisor.data.send_multipart([handle.identity, *frames])
        except zmq.ZMQError:
            self.finish(message.id, message.error("unavailable", f"stage {stage.config.name!r} is not connected"))
            return
        stage.pending += 1

    def on_worker(self, frames: list[bytes]) -> None:
        if self.supervisor.handle_by_identity(frames[0]) is None:
            return  # output of a worker generation that was replaced: its requests were already answered
        message = Message.from_frames(frames[1:])
        stage = self.supervisor.stages.get(message.stage or "")
        if message.type == "ack":
            if stage is not None:
                stage.pending = max(0, stage.pending - 1)
            return
        request = self.requests.get(message.id)
        if request is None or stage is None:
            self.late_outputs += 1
            return
        if message.type == "error":
            stage.last_error = message.data.get("message")
        hop = request.route.index(stage.config.name)
        if message.type != "error" and hop + 1 < len(request.route):
            self._forward(self.supervisor.stages[request.route[hop + 1]], message)
            return
        if self._is_news(request, message):
            self.publish("transcript", message)
        if message.final:
            self.finish(message.id, message)
        else:
            self.reply(request.client, replace(message, stage=None))

    @staticmethod
    def _is_news(request: Request, message: Message) -> bool:
        """Subscribers get each finished utterance once: not partials, not a stream's closing summary."""
        if message.type != "transcript" or message.data.get("partial"):
            return False
        return not (request.type == "stream" and message.final)

    def finish(self, request_id: str, message: Message) -> None:
        request = self.requests.pop(request_id, None)
        if request is None:
            return
        if message.type == "error":
            self.on_error(request_id, message.data.get("message", ""))
        self.reply(request.client, replace(message, stage=None, final=True))

    def expire(self, now: float) -> None:
        for request in [r for r in self.requests.values() if now > r.deadline_at]:
            waited_s = now - request.accepted_at
            self.finish(request.id, Message("error", id=request.id, data={
                "code": "deadline_exceeded", "message": f"no result within the deadline ({waited_s:.1f} s)"}))
            self._cancel(request)

    def _cancel(self, request: Request) -> None:
        for name in request.route:
            handle = self.supervisor.worker_of(name)
            self.supervisor.send_control(handle, Message("cancel", data={"request_id": request.id}))

    def worker_lost(self, handle: WorkerHandle, reason: str) -> None:
        names = {s.config.name for s in handle.stages}
        for stage in handle.stages:
            stage.pending = 0
        for request in [r for r in self.requests.values() if names & set(r.route)]:
            text = f"worker {handle.name!r} stopped while handling this request ({reason}); it is being restarted"
            self.finish(request.id, Message("error", id=request.id, data={"code": "worker_lost", "message": text}))

    def abort_all(self, code: str, text: str) -> None:
        for request_id in list(self.requests):
            self.finish(request_id, Message("error", id=request_id, data={"code": code, "message": text}))


def _no_route_text(kind: str, config: Config) -> str:
    hints = {"transcribe": "whisper", "stream": "whisper", "speak": "piper", "speak.tokens": "snac"}
    known = ", ".join(sorted(config.routes)) or "none"
    text = f"no stage handles {kind!r} requests (configured: {known})"
    if kind in hints:
        text += (f"; enable it with a pipeline stage using plugin {hints[kind]!r} and "
                 f"routes: {{{kind}: [that stage]}} in the config")
    return text
