"""Routing client requests through chains of stages, and the promise behind it.

The promise: every accepted request ends with exactly one final reply to its
client, a result or an error. Nothing a client sends can raise out of here:
a malformed message is answered with `bad_message` under its id when the
header has a readable one (then that id is spent), and is dropped and counted
when it has none. The request table (tcccd.core.requests) remembers ended ids, so a
late message never opens a second request nor earns a second final.

The broker decides; the supervisor sends to workers and keeps the stage
counters (`send_to_stage`, `count_busy`, ...); local requests (status,
profiles) are answered by the handler the daemon gives (`local`).

Seam for source stages (issue 11): a worker output whose id no client opened
(a microphone's utterance) goes to `on_unowned`, which may route it on
(`route_unowned`) or publish it; by default it is counted as a late output.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import structlog
import zmq

from tcccd.config import Config
from tcccd.core.requests import Request, RequestTable
from tcccd.core.sources import SOURCE_CLIENT_PREFIX
from tcccd.core.supervisor import Supervisor
from tcccd.core.workers import WorkerHandle
from tcccd.wire import messages
from tcccd.wire.protocol import MAX_HEADER_BYTES, Message, ProtocolError
from tcccd.wire.states import ROUTABLE, SERVING, WorkerState

Respond = Callable[[Message], None]


class Broker:
    def __init__(self, config: Config, supervisor: Supervisor, publish: Callable[[str, Message], None],
                 on_error: Callable[[str, str], None], local: Callable[[Message, Respond], None]) -> None:
        self.config = config
        self.supervisor = supervisor
        self.publish = publish
        self.on_error = on_error
        self.local = local
        self.on_unowned: Callable[[WorkerHandle, Message], None] | None = None
        # Seam for the memory capper (tcccd.memory): a refusal of new work (code, text, extra data), or None.
        self.admission: Callable[[], tuple[str, str, dict[str, Any]] | None] | None = None
        self.held: dict[str, list[tuple[str, Message]]] = {}  # stage -> messages waiting for its worker to load
        # tcccd.core.sources.attach replaces these: replies to a source's requests, and the journal before publishing
        self.on_source_reply: Callable[[bytes, Message], None] = lambda client, message: None
        self.publish_transcript: Callable[[Request, Message], Message] = self._publish_transcript
        self.requests = RequestTable(config.daemon)
        self.accepting = True
        self.counters = {"unreadable_messages": 0, "bad_messages": 0, "late_outputs": 0,
                         "undeliverable_replies": 0}
        self.log = structlog.get_logger()

    def bind(self, ctx: zmq.Context, secure: Callable[[zmq.Socket], None]) -> None:
        self.clients = ctx.socket(zmq.ROUTER)
        self.clients.setsockopt(zmq.LINGER, 500)
        self.clients.setsockopt(zmq.ROUTER_MANDATORY, 1)  # a reply to a client that is gone raises: counted
        self.clients.setsockopt(zmq.MAXMSGSIZE, self.config.daemon.max_request_bytes + MAX_HEADER_BYTES)
        secure(self.clients)
        self.clients.bind(self.config.daemon.client_endpoint)

    def reply(self, client: bytes, message: Message) -> None:
        if client.startswith(SOURCE_CLIENT_PREFIX):  # a request a source stage (the microphone) opened
            self.on_source_reply(client, message)
            return
        try:
            self.clients.send_multipart([client, *message.to_frames()], zmq.NOBLOCK)
        except zmq.ZMQError as exc:
            self.counters["undeliverable_replies"] += 1
            self.log.warning("reply not delivered: the client is gone or not reading", request_id=message.id,
                             error=str(exc))

    # -- from clients ------------------------------------------------------------------------------------------

    def on_client_frames(self, frames: list[bytes]) -> None:
        """One multipart message from the client socket; never raises for anything the client sent."""
        client = frames[0]
        try:
            message = Message.from_frames(frames[1:])
        except ProtocolError as exc:
            self._refuse_malformed(client, exc.request_id, str(exc))
            return
        problem = messages.check_request(message)
        if problem is None and len(message.payload or b"") > self.config.daemon.max_request_bytes:
            self._refuse(client, message, "too_large", f"payload of {len(message.payload or b'')} bytes is over "
                         f"max_request_bytes={self.config.daemon.max_request_bytes}; stream it instead")
            return
        if problem is not None:
            self._refuse_malformed(client, message.id, f"{message.type}: {problem}")
            return
        with structlog.contextvars.bound_contextvars(request_id=message.id):
            self.on_client(client, message)

    def _refuse_malformed(self, client: bytes, request_id: str | None, text: str) -> None:
        if request_id is None:
            self.counters["unreadable_messages"] += 1
            return
        self.counters["bad_messages"] += 1
        self._refuse(client, Message("error", id=request_id), "bad_message", text)

    def _refuse(self, client: bytes, message: Message, code: str, text: str) -> None:
        """End the request under this id with an error (once), or note the error to a stranger or late sender."""
        request = self.requests.get(message.id)
        if request is not None and request.client == client:
            self.finish(message.id, message.error(code, text))
            self._cancel(request)
        elif request is None and not self.requests.ended(message.id):
            self.requests.remember_ended(message.id)
            self.reply(client, message.error(code, text))
        else:
            self._late(client, message)

    def on_client(self, client: bytes, message: Message) -> None:
        """A valid message: local, a cancel, or part of a routed request."""
        request = self.requests.get(message.id)
        if request is None and self.requests.ended(message.id):
            self._late(client, message)
        elif request is not None and request.client != client:
            self.reply(client, message.error("bad_request", f"request id {message.id} belongs to another client; "
                                                            f"choose a new id", final=False))
        elif message.type == "cancel":
            self._client_cancel(client, message, request)
        elif message.type in messages.LOCAL_TYPES:
            self.requests.remember_ended(message.id)
            self.local(message, lambda reply: self.reply(client, reply))
        elif request is None:
            self._start(client, message)
        else:
            self._continue(request, message)

    def _late(self, client: bytes, message: Message) -> None:
        if self.requests.late(message.id):
            self.reply(client, message.error("bad_request", f"request {message.id} has already ended; late "
                                                            f"messages are dropped; use a new id", final=False))

    def _client_cancel(self, client: bytes, message: Message, request: Request | None) -> None:
        if request is None:
            self.requests.remember_ended(message.id)
            self.reply(client, message.error("bad_request", f"no open request {message.id} to cancel"))
            return
        self.finish(request.id, message.error("cancelled", "cancelled by the client"))
        self._cancel(request)

    def _start(self, client: bytes, message: Message) -> None:
        route = self.config.routes.get(_route_key(message))
        problem = self._refusal(client, message, route)
        if problem:
            self.requests.remember_ended(message.id)
            code, text, *extra = problem
            error = message.error(code, text)
            error.data.update(*extra)
            self.reply(client, error)
            return
        assert route is not None
        request = self.requests.open_request(client, message, route, time.monotonic())
        self._continue(request, message)

    def _continue(self, request: Request, message: Message) -> None:
        self.requests.took_input(request, message, time.monotonic())
        first = request.route[0]
        if message.seq > 0 and self.supervisor.stages[first].queue_full:
            self._drop_chunk(request, first, message)
            return
        self._forward(request, first, message)

    def _refusal(self, client: bytes, message: Message,
                 route: list[str] | None) -> tuple[str, str] | tuple[str, str, dict[str, Any]] | None:
        if not self.accepting:
            return "shutting_down", "tcccd is stopping and takes no new requests"
        if route is None:
            return "no_route", _no_route_text(_route_key(message), self.config)
        for name in route:  # every stage of the chain must be able to take it, not only the first
            problem = self._stage_refusal(name)
            if problem:
                return problem
        refusal = self.admission() if self.admission is not None else None
        if refusal is not None:
            return refusal
        full = [name for name in route if self.supervisor.stages[name].queue_full]
        if full:
            self.supervisor.count_busy(full[0])
            stage = self.supervisor.stages[full[0]]
            return "busy", (f"stage {full[0]!r} has {stage.pending} messages queued "
                            f"(max_queue={stage.config.max_queue}); retry later")
        cap = self.requests.cap_refusal(client, streaming=not message.final)
        return ("busy", cap) if cap else None

    def _stage_refusal(self, name: str) -> tuple[str, str] | None:
        runtime = self.supervisor.stages.get(name)
        if runtime is None:
            return "stage_disabled", f"stage {name!r} is disabled; set enabled: true for it in the config"
        handle = self.supervisor.worker_of(name)
        if handle.state == WorkerState.FAILED:
            wait_s = max(0.0, handle.next_start_at - time.monotonic())
            return "stage_failed", (f"stage {name!r} (plugin {runtime.config.plugin}) has failed: "
                                    f"{handle.last_error}; next retry in {wait_s:.0f} s, or fix the cause and "
                                    f"reload tcccd")
        if handle.state not in ROUTABLE:  # an unloaded one loads on demand
            return "unavailable", f"stage {name!r} is {handle.state}; retry in a few seconds"
        return None

    def _drop_chunk(self, request: Request, stage: str, message: Message) -> None:
        """Live audio that cannot be queued is dropped, counted and reported, never lost silently."""
        self.supervisor.count_dropped_chunk(stage)
        text = f"stage {stage!r} is behind: chunk seq {message.seq} dropped"
        self.reply(request.client, message.error("busy", text, final=False))
        if message.final:
            self._forward(request, stage, replace(message, payload=b"", data={}))

    def _forward(self, request: Request, stage: str, message: Message) -> None:
        """Send to the stage's worker with a per-message deadline: the request's, or for a stream chunk the default."""
        now = time.monotonic()
        deadline_at = request.deadline_at or now + self.config.daemon.default_deadline_s
        left_s = round(max(0.001, deadline_at - now), 3)
        handle = self.supervisor.worker_of(stage)
        if handle.state in (WorkerState.UNLOADED, WorkerState.LOADING) or stage in self.held:
            self.held.setdefault(stage, []).append((request.id, message))  # sent, in order, once it is ready
            self.supervisor.load(handle)
            return
        if not self.supervisor.send_to_stage(stage, replace(message, stage=stage, deadline_s=left_s)):
            self.finish(request.id, message.error("unavailable", f"stage {stage!r} is not connected; retry"))

    def flush_held(self) -> None:
        """Messages held while a stage's worker was loading go out once it is ready; ended requests' are dropped."""
        for stage in list(self.held):
            if stage not in self.supervisor.stages:
                del self.held[stage]  # gone with a reload, which ended its requests
            elif self.supervisor.worker_of(stage).state in SERVING:
                for request_id, message in self.held.pop(stage):
                    request = self.requests.get(request_id)
                    if request is not None:
                        self._forward(request, stage, message)

    # -- from workers ------------------------------------------------------------------------------------------

    def on_worker(self, handle: WorkerHandle, message: Message) -> None:
        request = self.requests.get(message.id)
        if request is None:
            if self.on_unowned is not None and not self.requests.ended(message.id):
                self.on_unowned(handle, message)
            else:
                self.counters["late_outputs"] += 1
            return
        stage = message.stage if message.stage in request.route else None
        if message.type == "error" and message.final:
            if stage is not None:
                self.supervisor.stages[stage].last_error = message.data.get("message")
            self.finish(message.id, message)  # an error from any hop (no_stage included) ends the request
            self._cancel(request)
            return
        if stage is None:
            self.counters["late_outputs"] += 1
            return
        hop = request.route.index(stage)
        if hop + 1 < len(request.route):
            self._forward(request, request.route[hop + 1], message)
            return
        if self._is_news(request, message):
            # journalled first (tcccd.record.journal), then published; the client's reply says the same (journal_seq)
            message = self.publish_transcript(request, message)
            self._alert_dropped_speech(message)
        if message.final:
            self.finish(message.id, message)
        else:
            self.reply(request.client, replace(message, stage=None))

    def _publish_transcript(self, request: Request, message: Message) -> Message:
        self.publish("transcript", message)
        return message

    def _alert_dropped_speech(self, message: Message) -> None:
        """Speech the recogniser could only write as a loop is left out of the record: say so, loudly."""
        for span in message.data.get("dropped") or ():
            text = (f"speech from {span['start_s']:.1f} s to {span['end_s']:.1f} s of request {message.id} was not "
                    f"transcribed ({span['reason']}): check the recording")
            self.on_error(message.id, text)
            self.publish("alert", message.reply("alert", {"kind": "speech_dropped", "request_id": message.id,
                                                          **span, "message": text}))

    @staticmethod
    def _is_news(request: Request, message: Message) -> bool:
        """Subscribers get each finished utterance once: not partials, not a stream's closing summary."""
        if message.type != "transcript" or message.data.get("partial"):
            return False
        return not (request.type == "stream" and message.final)

    def finish(self, request_id: str, message: Message) -> None:
        """The one final reply of a request."""
        request = self.requests.close(request_id)
        if request is None:
            return
        if message.type == "error":
            self.on_error(request_id, message.data.get("message", ""))
        self.reply(request.client, replace(message, stage=None, final=True))

    def expire(self, now: float) -> None:
        for request, code, text in self.requests.overdue(now):
            self.finish(request.id, Message("error", id=request.id, data={"code": code, "message": text}))
            self._cancel(request)

    def _cancel(self, request: Request) -> None:
        self.supervisor.cancel(request.id, request.route)

    def worker_lost(self, handle: WorkerHandle, reason: str) -> None:
        names = {s.config.name for s in handle.stages}
        text = f"worker {handle.name!r} stopped while handling this request ({reason}); it is being restarted"
        self.abort(names, "worker_lost", text)

    def abort(self, stages: set[str] | None, code: str, text: str) -> None:
        """End every open request (through `stages`, when given) with an error."""
        for request in list(self.requests.open.values()):
            if stages is None or stages & set(request.route):
                self.finish(request.id, Message("error", id=request.id, data={"code": code, "message": text}))
                self._cancel(request)


def _route_key(message: Message) -> str:
    """The routes entry a request takes: `speak` with data.play true goes through the stage that plays it."""
    return "speak.play" if message.type == "speak" and message.data.get("play") is True else message.type


def _no_route_text(kind: str, config: Config) -> str:
    hints = {"transcribe": "whisper", "stream": "whisper", "speak": "piper", "speak.tokens": "snac",
             "capture.mute": "capture", "capture.unmute": "capture"}
    known = ", ".join(sorted(config.routes)) or "none"
    text = f"no stage handles {kind!r} requests (configured: {known})"
    if kind in hints:
        text += (f"; enable it with a pipeline stage using plugin {hints[kind]!r} and "
                 f"routes: {{{kind}: [that stage]}} in the config")
    return text
