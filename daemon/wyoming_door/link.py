"""The Wyoming door's side of tcccd: one DEALER per connection, its mailboxes, counters and input limits.

Kept apart from the event mapping (tcccd.wyoming_door.handler) because none of it is
about Wyoming's events: it is what any front door that speaks to tcccd as a
client needs (a reply stream per request id, tcccd's error codes raised as
DaemonRefused, PCM widths tcccd does not take converted to pcm_s16le).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import numpy as np
import zmq
import zmq.asyncio

from tcccd.wire.errors import ErrorReply
from tcccd.wire.protocol import Message


class DaemonRefused(Exception):
    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code


@dataclass
class DoorCounters:
    """What status reports about the door; written on the door's thread, read as a snapshot."""

    connections_open: int = 0
    connections_total: int = 0
    requests_open: int = 0
    requests: dict[str, int] = field(default_factory=lambda: {"transcribe": 0, "speak": 0, "describe": 0})
    errors: int = 0
    cancelled_on_disconnect: int = 0
    refused_events: int = 0  # malformed: answered bad_message
    dropped_events: int = 0  # of a type the door does not serve: dropped, as the Wyoming spec asks
    refused_connections: int = 0


class BoundedReader:
    """The connection's StreamReader with a ceiling on what one event may declare (data or payload).

    The wyoming parser calls readexactly(n) with the length the peer declared; above the ceiling this raises
    ValueError, which the parser treats as the end of the stream: the connection is closed, not filled.
    """

    def __init__(self, reader: asyncio.StreamReader, max_bytes: int) -> None:
        self._reader = reader
        self.max_bytes = max_bytes
        self.refused: str | None = None

    async def readline(self) -> bytes:
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        if n > self.max_bytes:
            self.refused = f"an event declared {n} bytes; at most {self.max_bytes} are accepted in one event"
            raise ValueError(self.refused)
        return await self._reader.readexactly(n)

    def feed_eof(self) -> None:
        self._reader.feed_eof()


class TcccdLink:
    """The DEALER to tcccd and a mailbox per request id, filled by one pump task."""

    def __init__(self, ctx: zmq.asyncio.Context, endpoint: str, routing_id: bytes, reply_wait_s: float) -> None:
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.ROUTING_ID, routing_id)
        self.sock.connect(endpoint)
        self.reply_wait_s = reply_wait_s
        self.boxes: dict[str, asyncio.Queue[Message]] = {}
        self.open_streams: set[str] = set()  # streams still sending: no reply is due until they close
        self._pump = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            reply = Message.from_frames(await self.sock.recv_multipart())
            box = self.boxes.get(reply.id)
            if box is not None:
                box.put_nowait(reply)

    async def send(self, message: Message) -> None:
        self.boxes.setdefault(message.id, asyncio.Queue())
        await self.sock.send_multipart(message.to_frames())

    def stream_opened(self, request_id: str) -> None:
        """A stream that is still sending owes no reply: a long pause in dictation is not a dead daemon."""
        self.open_streams.add(request_id)

    def stream_closed(self, request_id: str) -> None:
        """Its last chunk is sent: from here its final reply is due within reply_wait_s."""
        self.open_streams.discard(request_id)

    async def replies(self, request_id: str) -> AsyncIterator[Message]:
        """Replies until the final one; a final error raises DaemonRefused with tcccd's code.

        A stream owes no reply while it is open (a long pause in dictation is not a dead daemon); once
        closed, its final reply is due within reply_wait_s, as for any request."""
        box = self.boxes.setdefault(request_id, asyncio.Queue())
        try:
            while True:
                try:
                    reply = await asyncio.wait_for(box.get(), self.reply_wait_s)
                except asyncio.TimeoutError:
                    if request_id in self.open_streams:
                        continue
                    raise
                if reply.type == "error" and reply.final:
                    error = ErrorReply.from_message(reply)
                    raise DaemonRefused(error.code, error.message)
                yield reply
                if reply.final:
                    return
        finally:
            self.boxes.pop(request_id, None)
            self.open_streams.discard(request_id)

    async def call(self, message: Message) -> Message:
        message.final = True
        await self.send(message)
        async for reply in self.replies(message.id):
            last = reply
        return last

    def close(self) -> None:
        self._pump.cancel()
        self.sock.close(0)


def to_tcccd_pcm(pcm: bytes, width: int) -> tuple[bytes, str]:
    """Wyoming PCM of any width as tcccd's pcm_s16le (the daemon converts rate and channels itself)."""
    if width == 2:
        return pcm, "pcm_s16le"
    usable = len(pcm) - len(pcm) % width
    if width == 1:  # unsigned 8-bit
        samples = (np.frombuffer(pcm[:usable], np.uint8).astype(np.int16) - 128) << 8
    elif width == 3:  # signed 24-bit little-endian: keep the top two bytes
        samples = np.frombuffer(pcm[:usable], np.uint8).reshape(-1, 3)[:, 1:].copy().view("<i2").ravel()
    else:  # signed 32-bit
        samples = (np.frombuffer(pcm[:usable], "<i4") >> 16).astype("<i2")
    return samples.astype("<i2").tobytes(), "pcm_s16le"
