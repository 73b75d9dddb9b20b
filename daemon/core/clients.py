"""The doors clients come in by, and who each client is.

Every client gets a key that says which door it came in by, so no client can
pass for another kind:

- `zmq:<routing id>`: the client endpoint (tcp or ipc, CurveZMQ when keyed);
- `wyoming:<n>`: a Wyoming connection, whose DEALER reaches the daemon over an
  in-process socket (`DOOR_ENDPOINT`) that nothing outside this process can
  connect to, whatever routing id a ZeroMQ client chooses;
- `source:<stage>`: audio no client sent (the microphone), opened by
  tcccd.core.sources and answered there, never on a socket;
- `internal:<part>`: requests the daemon sends itself (the casualty card's
  `card.extract` and its read-back), answered to that part, never on a socket.

The broker routes by key; this module turns keys into sockets and back.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Iterator

import structlog
import zmq

from tcccd.wire.protocol import MAX_HEADER_BYTES, Message, new_id, too_large_reply
from tcccd.wyoming_door.settings import DOOR_ENDPOINT

ZMQ_CLIENT = b"zmq:"
DOOR_CLIENT = b"wyoming:"
SOURCE_CLIENT = b"source:"
INTERNAL_CLIENT = b"internal:"
CLIENT_LINGER_MS = 500


def is_source(client: bytes) -> bool:
    return client.startswith(SOURCE_CLIENT)


def is_internal(client: bytes) -> bool:
    return client.startswith(INTERNAL_CLIENT)


def door_of(client: bytes) -> str:
    """Which door a client came in by: `zmq`, `wyoming` or `source` (the journal's `source` for clients)."""
    return client.split(b":", 1)[0].decode()


class ClientSockets:
    """The ROUTER sockets clients talk to: the configured endpoint and the Wyoming door's in-process one."""

    def __init__(self, endpoint: str, max_request_bytes: int) -> None:
        self.endpoint = endpoint
        self.max_request_bytes = max_request_bytes
        self.undeliverable = 0
        self.log = structlog.get_logger()
        self._by_prefix: dict[bytes, zmq.Socket] = {}

    def bind(self, ctx: zmq.Context, secure: Callable[[zmq.Socket], None]) -> None:
        outside = self._router(ctx)
        secure(outside)
        outside.bind(self.endpoint)
        door = self._router(ctx)  # in-process: no key needed, nothing outside this process reaches it
        door.bind(DOOR_ENDPOINT)
        self._by_prefix = {ZMQ_CLIENT: outside, DOOR_CLIENT: door}

    def _router(self, ctx: zmq.Context) -> zmq.Socket:
        sock = ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, CLIENT_LINGER_MS)
        sock.setsockopt(zmq.ROUTER_MANDATORY, 1)  # a reply to a client that is gone raises: counted
        sock.setsockopt(zmq.MAXMSGSIZE, self.max_request_bytes + MAX_HEADER_BYTES)
        return sock

    @property
    def sockets(self) -> list[zmq.Socket]:
        return list(self._by_prefix.values())

    def waiting(self, limit: int) -> Iterator[tuple[bytes, list[bytes]]]:
        """Up to `limit` messages that are waiting, each as (client key, frames after the routing id)."""
        served, busy = 0, True
        while busy and served < limit:  # one from each door in turn: a flood at one never starves the other
            busy = False
            for prefix, sock in self._by_prefix.items():
                if served < limit and sock.poll(0):
                    routing_id, *frames = sock.recv_multipart()
                    served, busy = served + 1, True
                    yield prefix + routing_id, frames

    def send(self, client: bytes, message: Message) -> None:
        """A reply to a client that came in by a socket; one that is gone or not reading is counted, not fatal.
        A reply whose header is over the protocol's limit goes as a `reply_too_large` error instead."""
        prefix, _, routing_id = client.partition(b":")
        sock = self._by_prefix.get(prefix + b":")
        try:
            if sock is None:
                raise zmq.ZMQError(msg=f"no door for client {client!r}")
            frames = message.to_frames()
            if len(frames[0]) > MAX_HEADER_BYTES:
                self.log.error("reply over the header limit: sent reply_too_large instead", request_id=message.id,
                               type=message.type, header_bytes=len(frames[0]))
                frames = too_large_reply(message, len(frames[0])).to_frames()
            sock.send_multipart([routing_id, *frames], zmq.NOBLOCK)
        except zmq.ZMQError as exc:
            self.undeliverable += 1
            self.log.warning("reply not delivered: the client is gone or not reading", request_id=message.id,
                             error=str(exc))

    def close(self) -> None:
        for sock in self._by_prefix.values():
            sock.close(CLIENT_LINGER_MS)


class InternalClient:
    """A part of the daemon that sends requests like a client (the card stage's extraction, the read-back).

    Implements tcccd.ports.Requester. `submit` issues the id and queues the request; the main loop takes it
    from `outgoing` into the broker, so a part never re-enters the broker from inside one of its callbacks;
    the broker hands back replies with `deliver`, and only those of this client's own open requests wait in
    `replies()` for the part to read on its next tick (the same turn of the loop)."""

    def __init__(self, name: str) -> None:
        self.key = INTERNAL_CLIENT + name.encode()
        self.name = name
        self.outgoing: collections.deque[Message] = collections.deque()
        self._inbox: collections.deque[Message] = collections.deque()
        self._open: set[str] = set()
        self._ids = itertools.count(1)
        self._token = new_id()[:8]

    def submit(self, type: str, data: dict | None = None, payload: bytes | None = None,
               deadline_s: float | None = None) -> str:
        message = Message(type, id=f"{self.name}.{self._token}.{next(self._ids)}", final=True,
                          deadline_s=deadline_s, data=data or {}, payload=payload)
        self._open.add(message.id)
        self.outgoing.append(message)
        return message.id

    def deliver(self, message: Message) -> None:
        if message.id not in self._open:
            return  # a reply to a request this client no longer waits for
        self._inbox.append(message)
        if message.final:
            self._open.discard(message.id)

    def replies(self) -> list[Message]:
        taken = list(self._inbox)
        self._inbox.clear()
        return taken


class InternalClients:
    """The daemon's own clients, by key: each part that sends requests gets one (`client(name)`)."""

    def __init__(self) -> None:
        self._by_key: dict[bytes, InternalClient] = {}

    def client(self, name: str) -> InternalClient:
        made = self._by_key[INTERNAL_CLIENT + name.encode()] = InternalClient(name)
        return made

    def deliver(self, key: bytes, message: Message) -> None:
        client = self._by_key.get(key)
        if client is not None:
            client.deliver(message)

    def outgoing(self) -> Iterator[tuple[bytes, Message]]:
        """Every request the parts submitted since the last call, in order."""
        for client in self._by_key.values():
            while client.outgoing:
                yield client.key, client.outgoing.popleft()


class Events:
    """The events socket (PUB): every subscriber's transcripts, profile changes, alerts and card updates.

    Implements tcccd.ports.Publisher. A subscriber that does not keep up loses events at ZeroMQ's high-water
    mark; the record itself is the journal (`transcripts.since`), never this socket."""

    def __init__(self, ctx: zmq.Context) -> None:
        self.socket = ctx.socket(zmq.PUB)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.log = structlog.get_logger()

    def bind(self, endpoint: str, secure: Callable[[zmq.Socket], None]) -> None:
        secure(self.socket)
        self.socket.bind(endpoint)

    def publish(self, topic: str, message: Message) -> None:
        try:
            self.socket.send_multipart([topic.encode(), *message.to_frames()], zmq.NOBLOCK)
        except zmq.ZMQError as exc:
            self.log.warning("event not published", topic=topic, error=str(exc))
