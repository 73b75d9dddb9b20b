"""Requests no client sent: audio from a source stage (the microphone), routed like a client's stream.

A source stage's worker sends unsolicited messages (`Plugin.poll`) carrying
`data.source`. The broker hands any worker output that no open request owns
to `route`; here a source's message becomes a request of a daemon-owned
client, `source:<stage>` (tcccd.core.clients), which the broker then takes
through its ordinary path: the same caps, queues, drops and deadlines as a
client's stream.

The source names its stream; the daemon keys the request with its own id, so a
stream whose request was ended under it (ASR restarted, idle timeout) carries on
as a new request instead of being dropped as late. Chunks that arrive while the
route cannot take them (ASR still loading) are counted and dropped before a
request is opened. Replies meant for the source client are what subscribers
hear: partials are published, finals go through the journal (TranscriptFeed),
errors are noted once per kind.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import structlog

from tcccd.core.clients import SOURCE_CLIENT
from tcccd.core.requests import RequestTable
from tcccd.core.roster import Roster
from tcccd.core.supervisor import Supervisor
from tcccd.core.workers import WorkerHandle
from tcccd.ports import ConfigSource, ErrorNotes
from tcccd.record.feed import TranscriptFeed
from tcccd.system.logs import Once
from tcccd.wire.control import FinishStreams
from tcccd.wire.protocol import Message
from tcccd.wire.states import SERVING

FINISH_WAIT_S = 2.0  # a source's own closing of its stream at a stop, before the daemon closes it


class SourceRouter:
    def __init__(self, config: ConfigSource, roster: Roster, supervisor: Supervisor, requests: RequestTable,
                 feed: TranscriptFeed, errors: ErrorNotes) -> None:
        self.config = config
        self.roster = roster
        self.supervisor = supervisor
        self.requests = requests
        self.feed = feed
        self.errors = errors
        self.request_of: dict[str, str] = {}  # the source's stream id -> the request carrying it now
        self.last_seq: dict[str, int] = {}  # the source's stream id -> the seq of its latest chunk
        self.closed = False  # the daemon is stopping: no new source stream is routed
        self.finish_by: float | None = None  # when streams still open after a stop are closed by the daemon
        self.source_of: dict[bytes, str] = {}  # source client -> its data.source name ("mic")
        self.counters = {"source_chunks": 0, "source_chunks_not_routed": 0}
        self._ids = itertools.count(1)
        self.told = Once()
        self.log = structlog.get_logger()

    def owns(self, handle: WorkerHandle, message: Message) -> bool:
        """A source stage's unsolicited message (else: a late output of an ended request)."""
        return isinstance(message.data.get("source"), str) and \
            message.stage in {s.config.name for s in handle.stages}

    def route(self, message: Message) -> tuple[bytes, Message] | None:
        """The (client, message) to take as a client's request, or None when the route cannot take it now."""
        self.counters["source_chunks"] += 1
        client = SOURCE_CLIENT + str(message.stage).encode()
        self.source_of[client] = message.data["source"]
        request_id = self.request_of.get(message.id)
        if self.closed and request_id not in self.requests:  # stopping: streams open at the stop finish, no more
            self.counters["source_chunks_not_routed"] += 1
            return None
        if request_id is None or request_id not in self.requests:
            problem = self._not_routable(message.type, self.config.current().routes.get(message.type))
            if problem:
                self.counters["source_chunks_not_routed"] += 1
                self._note_once(problem, f"audio from {message.stage!r} not routed: {problem}")
                return None
            request_id = f"{message.id}.{next(self._ids)}"
            self.request_of[message.id] = request_id
            self.told.forget()  # routable again: the next problem is news
        self.last_seq[message.id] = message.seq
        if message.final:
            self.request_of.pop(message.id, None)
            self.last_seq.pop(message.id, None)
        return client, replace(message, id=request_id, stage=None)

    def finish_streams(self, now: float) -> None:
        """A stop: each source is asked to send what it still holds and close its stream; no new one is routed.

        A microphone's stream never ends by itself, and audio still in the capture worker (a loaded machine
        lags seconds) would be lost if the daemon closed the stream itself. The stages finish what they get
        (ASR transcribes the utterance, the journal records it) and the drain ends when they have; a source that
        has not closed its stream within FINISH_WAIT_S (a hung worker) has it closed for it (`overdue`)."""
        self.closed = True
        self.finish_by = now + FINISH_WAIT_S
        for handle in {h.name: h for h in map(self._worker_of_stream, self.request_of.values()) if h}.values():
            self.supervisor.send_control(handle, FinishStreams())

    def overdue(self, now: float) -> list[tuple[bytes, Message]]:
        """The closing message of every stream its source left open FINISH_WAIT_S after the stop."""
        if self.finish_by is None or now < self.finish_by:
            return []
        self.finish_by = None
        closing = []
        for stream_id, request_id in self.request_of.items():
            request = self.requests.get(request_id)
            if request is not None and request.streaming:
                self.log.warning("source did not finish its stream; closed without it", stream_id=stream_id)
                closing.append((request.client, Message(request.type, id=request_id, final=True,
                                                        seq=self.last_seq.get(stream_id, 0) + 1)))
        self.request_of.clear()
        self.last_seq.clear()
        return closing

    def _worker_of_stream(self, request_id: str) -> WorkerHandle | None:
        request = self.requests.get(request_id)
        if request is None or not request.client.startswith(SOURCE_CLIENT):
            return None
        stage = request.client[len(SOURCE_CLIENT):].decode()
        return self.roster.worker_of(stage) if self.roster.has_stage(stage) else None

    def _not_routable(self, kind: str, route: list[str] | None) -> str | None:
        if route is None:
            return f"no route for {kind!r} (add routes: {{{kind}: [asr]}})"
        for name in route:
            if not self.roster.has_stage(name):
                return f"stage {name!r} is disabled"
            if self.roster.worker_of(name).state not in SERVING:
                return f"stage {name!r} is not ready"
        return None

    def source_name(self, client: bytes) -> str:
        return self.source_of.get(client, "source")

    def on_reply(self, client: bytes, message: Message) -> None:
        """What the broker would send the source client: partials are published, errors noted."""
        source = self.source_name(client)
        if message.type == "transcript" and message.data.get("partial"):
            self.feed.partial(message, source)
        elif message.type == "error":
            self._note_once(message.data.get("code", "error"), f"{source} stream: {message.data.get('message')}")

    def _note_once(self, key: str, text: str) -> None:
        """Log and note a problem the first time; a microphone would repeat it 15 times a second."""
        if self.told.first(key):
            self.log.warning("source audio problem", problem=text)
            self.errors.note("-", text)

    def report(self) -> dict[str, Any]:
        return {**self.counters, "open_streams": len(self.request_of)}
