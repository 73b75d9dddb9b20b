"""The table of open requests, the memory of ended ones, and the caps that answer `busy`.

A request is open from its first accepted message until its one final reply.
Its id is then remembered (a bounded number of ids, oldest forgotten first) so
that a late chunk of a stream that already ended never opens a new request
under the same id and never earns a second final reply.

A request whose first message is not final is a stream (live dictation, a token
stream): it has no total deadline. It ends on its closing message, on
`stream_idle_timeout_s` without a chunk, or on cancel; only after its closing
message does a deadline run, for the last result.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Protocol

from tcccd.config import DaemonSection
from tcccd.wire.protocol import Message

ENDED_REMEMBERED = 16384


@dataclass
class Request:
    id: str
    client: bytes
    type: str
    route: list[str]
    accepted_at: float
    deadline_at: float | None  # None while a stream is open: it has no total deadline
    last_input_at: float
    streaming: bool


class RequestTable:
    def __init__(self, limits: DaemonSection) -> None:
        self.limits = limits
        self.open: dict[str, Request] = {}
        self._ended: collections.OrderedDict[str, bool] = collections.OrderedDict()  # id -> late noticed
        self._per_client: collections.Counter[bytes] = collections.Counter()
        self._streams_per_client: collections.Counter[bytes] = collections.Counter()
        self.late_inputs = 0

    def __len__(self) -> int:
        return len(self.open)

    def __contains__(self, request_id: str) -> bool:
        return request_id in self.open

    def get(self, request_id: str) -> Request | None:
        return self.open.get(request_id)

    def stages_in_use(self) -> set[str]:
        """Every stage an open request routes through."""
        return {stage for request in self.open.values() for stage in request.route}

    def ended(self, request_id: str) -> bool:
        return request_id in self._ended

    def late(self, request_id: str) -> bool:
        """Count a message for an ended request; True the first time (the sender gets one notice, no more)."""
        self.late_inputs += 1
        first = not self._ended.get(request_id, True)
        if request_id in self._ended:
            self._ended[request_id] = True
        return first

    def cap_refusal(self, client: bytes, streaming: bool) -> str | None:
        """Why a new request from `client` would exceed a cap, or None."""
        d = self.limits
        if len(self.open) >= d.max_open_requests:
            return f"{len(self.open)} requests are open (max_open_requests={d.max_open_requests}); retry later"
        if self._per_client[client] >= d.max_open_requests_per_client:
            return (f"this client has {self._per_client[client]} requests open "
                    f"(max_open_requests_per_client={d.max_open_requests_per_client}); wait for their replies")
        if streaming:
            streams = sum(self._streams_per_client.values())
            if streams >= d.max_open_streams:
                return f"{streams} streams are open (max_open_streams={d.max_open_streams}); retry later"
            if self._streams_per_client[client] >= d.max_open_streams_per_client:
                return (f"this client has {self._streams_per_client[client]} streams open "
                        f"(max_open_streams_per_client={d.max_open_streams_per_client}); close one first")
        return None

    def open_request(self, client: bytes, message: Message, route: list[str], now: float) -> Request:
        streaming = not message.final
        deadline_at = None if streaming else now + (message.deadline_s or self.limits.default_deadline_s)
        request = Request(message.id, client, message.type, route, now, deadline_at, now, streaming)
        self.open[message.id] = request
        self._per_client[client] += 1
        if streaming:
            self._streams_per_client[client] += 1
        return request

    def took_input(self, request: Request, message: Message, now: float) -> None:
        """A chunk arrived: the idle clock restarts; the closing message starts the deadline for the result."""
        request.last_input_at = now
        if message.final and request.streaming:
            self._close_stream(request)
            request.deadline_at = now + (message.deadline_s or self.limits.default_deadline_s)

    def close(self, request_id: str) -> Request | None:
        """End a request: forget it as open, remember its id as ended."""
        request = self.open.pop(request_id, None)
        if request is None:
            return None
        self._per_client[request.client] -= 1
        if self._per_client[request.client] <= 0:
            del self._per_client[request.client]
        if request.streaming:
            self._close_stream(request)
        self.remember_ended(request_id)
        return request

    def remember_ended(self, request_id: str) -> None:
        self._ended[request_id] = False
        self._ended.move_to_end(request_id)
        while len(self._ended) > ENDED_REMEMBERED:
            self._ended.popitem(last=False)

    def _close_stream(self, request: Request) -> None:
        request.streaming = False
        self._streams_per_client[request.client] -= 1
        if self._streams_per_client[request.client] <= 0:
            del self._streams_per_client[request.client]

    def overdue(self, now: float) -> list[tuple[Request, str, str]]:
        """Requests to end now, each with the error code and text that say why."""
        out = []
        idle_s = self.limits.stream_idle_timeout_s
        for request in self.open.values():
            if request.streaming and now - request.last_input_at > idle_s:
                out.append((request, "stream_idle", f"no chunk for {idle_s:g} s (stream_idle_timeout_s); "
                                                    f"send the closing message (final: true) to end a stream"))
            elif request.deadline_at is not None and now > request.deadline_at:
                out.append((request, "deadline_exceeded", f"no result within the deadline "
                                                          f"({now - request.accepted_at:.1f} s after acceptance)"))
        return out


class RoutingCounters:
    """What the broker counts for status (messages it could not read, refused as malformed, outputs too late),
    with the replies no client took and the inputs that came after their request ended."""

    def __init__(self, requests: RequestTable, clients: Undeliverable) -> None:
        self.requests = requests
        self.clients = clients
        self.counts = {"unreadable_messages": 0, "bad_messages": 0, "late_outputs": 0}

    def count(self, name: str) -> None:
        self.counts[name] += 1

    def report(self) -> dict[str, int]:
        return {**self.counts, "undeliverable_replies": self.clients.undeliverable,
                "late_inputs": self.requests.late_inputs}


class Undeliverable(Protocol):
    """tcccd.core.clients.ClientSockets: replies it could not deliver (the client gone or not reading)."""

    undeliverable: int
