"""Routing client requests through chains of stages, and the promise behind it.

The promise: every accepted request ends with exactly one final reply to its
client, a result or an error. Nothing a client sends can raise out of here:
a malformed message is answered with `bad_message` under its id when the
header has a readable one (then that id is spent), and is dropped and counted
when it has none. The request table (tcccd.core.requests) remembers ended ids, so a
late message never opens a second request nor earns a second final.

The broker decides; the supervisor sends to workers (`send_to_stage`,
`cancel`) and the roster keeps the stage counters; local requests (status,
profiles, the card) are answered by tcccd.core.local_requests; whether a new
request is accepted is tcccd.core.admission's to say; replies leave through the
client's door (tcccd.core.clients), to the daemon's own internal client that
sent it (the casualty card, the read-back), or, for audio no client sent,
through the source router (tcccd.core.sources), which also turns a worker output
whose id no client opened (a microphone's utterance) into a request. Each
finished utterance is journalled, then published, through the transcript feed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

import structlog

from tcccd.core.admission import Admission, route_key
from tcccd.core.clients import ClientSockets, InternalClients, door_of, is_internal, is_source
from tcccd.core.requests import Request, RequestTable, RoutingCounters
from tcccd.core.roster import Roster
from tcccd.core.sources import SourceRouter
from tcccd.core.supervisor import Supervisor
from tcccd.core.workers import WorkerHandle
from tcccd.ports import AlertSink, ConfigSource, ErrorNotes
from tcccd.record.feed import TranscriptFeed
from tcccd.wire import messages
from tcccd.wire.alerts import SpeechDropped
from tcccd.wire.protocol import Message, ProtocolError
from tcccd.wire.states import SERVING, WorkerState

Respond = Callable[[Message], None]


class LocalAnswers(Protocol):
    """tcccd.core.local_requests.LocalRequests: the requests the daemon answers itself."""

    def answer(self, message: Message, respond: Respond) -> None: ...


class Broker:
    def __init__(self, config: ConfigSource, roster: Roster, supervisor: Supervisor, requests: RequestTable,
                 admission: Admission, clients: ClientSockets, sources: SourceRouter, feed: TranscriptFeed,
                 alerts: AlertSink, errors: ErrorNotes, counters: RoutingCounters, local: LocalAnswers,
                 internal: InternalClients) -> None:
        self.config = config
        self.roster = roster
        self.supervisor = supervisor
        self.requests = requests
        self.admission = admission
        self.clients = clients
        self.sources = sources
        self.feed = feed
        self.alerts = alerts
        self.errors = errors
        self.counters = counters
        self.local = local
        self.internal = internal
        self.held: dict[str, list[tuple[str, Message]]] = {}  # stage -> messages waiting for its worker to load
        self.log = structlog.get_logger()

    def reply(self, client: bytes, message: Message) -> None:
        if is_source(client):  # a request a source stage (the microphone) opened
            self.sources.on_reply(client, message)
        elif is_internal(client):  # a request the daemon sent itself (the casualty card, the read-back)
            self.internal.deliver(client, message)
        else:
            self.clients.send(client, message)

    # -- from clients ------------------------------------------------------------------------------------------

    def on_client_frames(self, client: bytes, frames: list[bytes]) -> None:
        """One multipart message from a client (its key: tcccd.core.clients); never raises for what it sent."""
        try:
            message = Message.from_frames(frames)
        except ProtocolError as exc:
            self._refuse_malformed(client, exc.request_id, str(exc))
            return
        problem = messages.check_request(message)
        max_bytes = self.config.current().daemon.max_request_bytes
        if problem is None and len(message.payload or b"") > max_bytes:
            self._refuse(client, message, "too_large", f"payload of {len(message.payload or b'')} bytes is over "
                         f"max_request_bytes={max_bytes}; stream it instead")
            return
        if problem is not None:
            self._refuse_malformed(client, message.id, f"{message.type}: {problem}")
            return
        with structlog.contextvars.bound_contextvars(request_id=message.id):
            self.on_client(client, message)

    def _refuse_malformed(self, client: bytes, request_id: str | None, text: str) -> None:
        if request_id is None:
            self.counters.count("unreadable_messages")
            return
        self.counters.count("bad_messages")
        self._refuse(client, Message("error", id=request_id), "bad_message", text)

    def _refuse(self, client: bytes, message: Message, code: str, text: str) -> None:
        """End the request under this id with an error (once), or note the error to a stranger or late sender."""
        request = self.requests.get(message.id)
        if request is not None and request.client == client:
            self.finish(message.id, message.error(code, text))
            self._cancel(request)
        elif request is not None:
            self._not_yours(client, message)
        elif not self.requests.ended(message.id):
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
            self._not_yours(client, message)
        elif message.type == "cancel":
            self._client_cancel(client, message, request)
        elif message.type in messages.LOCAL_TYPES:
            self.requests.remember_ended(message.id)
            self.local.answer(message, lambda reply: self.reply(client, reply))
        elif request is None:
            self._start(client, message)
        else:
            self._continue(request, message)

    def _not_yours(self, client: bytes, message: Message) -> None:
        self.reply(client, message.error("bad_request", f"request id {message.id} belongs to another client; "
                                                        f"choose a new id", final=False))

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
        route = self.config.current().routes.get(route_key(message))
        problem = self.admission.refusal(client, message, route)
        if problem:
            self.requests.remember_ended(message.id)
            code, text, extra = problem
            self.reply(client, message.error(code, text, **extra))
            return
        assert route is not None
        request = self.requests.open_request(client, message, route, time.monotonic())
        self._continue(request, message)

    def _continue(self, request: Request, message: Message) -> None:
        self.requests.took_input(request, message, time.monotonic())
        first = request.route[0]
        if message.seq > 0 and self.roster.queue_full(first):
            self._drop_chunk(request, first, message)
            return
        self._forward(request, first, message)

    def _drop_chunk(self, request: Request, stage: str, message: Message) -> None:
        """Live audio that cannot be queued is dropped, counted and reported, never lost silently."""
        self.roster.count_dropped_chunk(stage)
        text = f"stage {stage!r} is behind: chunk seq {message.seq} dropped"
        self.reply(request.client, message.error("busy", text, final=False))
        if message.final:
            self._forward(request, stage, replace(message, payload=b"", data={}))

    def _forward(self, request: Request, stage: str, message: Message) -> None:
        """Send to the stage's worker with a per-message deadline: the request's, or for a stream chunk the default."""
        now = time.monotonic()
        deadline_at = request.deadline_at or now + self.config.current().daemon.default_deadline_s
        left_s = round(max(0.001, deadline_at - now), 3)
        handle = self.roster.worker_of(stage)
        if handle.state in (WorkerState.UNLOADED, WorkerState.LOADING) or stage in self.held:
            self.held.setdefault(stage, []).append((request.id, message))  # sent, in order, once it is ready
            self.supervisor.load(handle)
            return
        if not self.supervisor.send_to_stage(stage, replace(message, stage=stage, deadline_s=left_s)):
            self.finish(request.id, message.error("unavailable", f"stage {stage!r} is not connected; retry"))
            self._cancel(request)  # the stages before it may still hold the request

    def flush_held(self) -> None:
        """Messages held while a stage's worker was loading go out once it is ready; ended requests' are dropped."""
        for stage in list(self.held):
            if not self.roster.has_stage(stage):
                del self.held[stage]  # gone with a reload, which ended its requests
            elif self.roster.worker_of(stage).state in SERVING:
                for request_id, message in self.held.pop(stage):
                    request = self.requests.get(request_id)
                    if request is not None:
                        self._forward(request, stage, message)

    # -- from workers ------------------------------------------------------------------------------------------

    def on_worker(self, handle: WorkerHandle, message: Message) -> None:
        request = self.requests.get(message.id)
        if request is None:
            if self.sources.owns(handle, message) and not self.requests.ended(message.id):
                routed = self.sources.route(message)
                if routed is not None:
                    self.on_client(*routed)
            else:
                self.counters.count("late_outputs")
            return
        stage = message.stage if message.stage in request.route else None
        if message.type == "error" and message.final:
            if stage is not None:
                self.roster.note_error(stage, message.data.get("message"))
            self.finish(message.id, message)  # an error from any hop (no_stage included) ends the request
            self._cancel(request)
            return
        if stage is None:
            self.counters.count("late_outputs")
            return
        hop = request.route.index(stage)
        if hop + 1 < len(request.route):
            self._forward(request, request.route[hop + 1], message)
            return
        if self._is_news(request, message):
            # journalled first (tcccd.record.feed), then published; the client's reply says the same (journal_seq)
            message = self.feed.final(message, self.source_of(request.client))
            self._alert_dropped_speech(message)
        if message.final:
            self.finish(message.id, message)
        else:
            self.reply(request.client, replace(message, stage=None))

    def source_of(self, client: bytes) -> str:
        """What the journal records as the transcript's source: the source's own name (mic), wyoming, or client."""
        if is_source(client):
            return self.sources.source_name(client)
        return "wyoming" if door_of(client) == "wyoming" else "client"

    def _alert_dropped_speech(self, message: Message) -> None:
        """Speech the recogniser could only write as a loop is left out of the record: say so, loudly."""
        for span in message.data.get("dropped") or ():
            text = (f"speech from {span['start_s']:.1f} s to {span['end_s']:.1f} s of request {message.id} was not "
                    f"transcribed ({span['reason']}): check the recording") if span["reason"] != "audio_lost" else (
                f"{span.get('chunks_missing')} chunk(s) of request {message.id}'s audio never reached the recogniser, "
                f"{span['start_s']:.1f} s into it: words said then are missing from the record")
            self.alerts.alert(SpeechDropped(message=text, request_id=message.id, start_s=span["start_s"],
                                            end_s=span["end_s"], reason=span["reason"]), message.id)

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
            self.errors.note(request_id, message.data.get("message", ""))
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

