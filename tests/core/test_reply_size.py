"""The daemon never sends a client a frame the client must refuse: a reply whose header would pass the protocol's
64 KiB limit leaves the client socket as a `reply_too_large` error under its id (read raw), and the official
client reads that error instead of failing on the frame."""

from __future__ import annotations

import time

import pytest
import zmq

from tcccd.core.clients import ClientSockets
from tcccd.wire.client import Client, RequestFailed
from tcccd.wire.protocol import MAX_HEADER_BYTES, Message
from tests.support.daemon import free_port
from tests.support.rawclient import RawClient, header


@pytest.fixture
def sockets():
    ctx = zmq.Context()
    doors = ClientSockets(f"tcp://127.0.0.1:{free_port()}", 1 << 20)
    doors.bind(ctx, lambda sock: None)
    yield doors
    doors.close()
    ctx.destroy(linger=0)


def asked(doors: ClientSockets) -> tuple[bytes, Message]:
    """The next request that reaches the doors, with the key of the client that sent it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for key, frames in doors.waiting(8):
            return key, Message.from_frames(frames)
        time.sleep(0.01)
    raise AssertionError("no request reached the client socket")


def huge(request: Message) -> Message:
    words = [{"text": "tourniquet", "start_s": i * 0.3, "end_s": i * 0.3 + 0.2} for i in range(2000)]
    return request.reply("transcripts", {"words": words}, final=True)


def test_an_oversize_reply_is_sent_as_reply_too_large_and_a_fitting_one_as_is(sockets) -> None:
    with RawClient(sockets.endpoint) as raw:
        raw.send(header("transcripts.since", "big", final=True))
        key, request = asked(sockets)
        sockets.send(key, huge(request))
        raw.send(header("ping", "small", final=True))
        key, request = asked(sockets)
        sockets.send(key, request.reply("pong", final=True))
        raw.collect(until=lambda: raw.finals("big") and raw.finals("small"))
    assert all(len(frames[0]) <= MAX_HEADER_BYTES for frames in raw.frames)
    refused = raw.final("big")
    assert refused["type"] == "error" and refused["data"]["code"] == "reply_too_large"
    assert "over the protocol's limit of 65536" in refused["data"]["message"]
    assert raw.final("small")["type"] == "pong"


def test_the_client_gets_a_clear_error_not_a_protocol_error(sockets) -> None:
    with Client(sockets.endpoint, timeout_s=10) as client:
        sent = Message("transcripts.since", final=True)
        client.send(sent)
        key, request = asked(sockets)
        sockets.send(key, huge(request))
        with pytest.raises(RequestFailed) as failed:
            list(client.replies(sent.id, 10))
    assert failed.value.code == "reply_too_large"
