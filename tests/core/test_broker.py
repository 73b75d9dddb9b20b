"""The broker's promise at a hop that fails: the client gets its one final reply, and every stage that still
holds the request is told to stop.

The daemon is built in this process and its loop turned by hand; raw DEALER sockets stand where the first
stage's worker process would be (with its identity), and the second stage's worker never connects, so the
forward to it cannot be sent, deterministically.
"""

from __future__ import annotations

import time
from pathlib import Path

import zmq

from tcccd import config as cfg
from tcccd.core.daemon import Daemon
from tcccd.wire.protocol import Message
from tcccd.wire.states import WorkerState
from tests.support.daemon import make_config


def pump(daemon: Daemon, until, timeout_s: float = 10.0) -> None:
    """Turn the loop's socket service until `until()` holds (zmq.select with no sockets does not wait: sleep)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        daemon.serve_sockets()
        if until():
            return
        time.sleep(0.01)
    raise AssertionError("condition not reached")


def test_a_forward_that_cannot_be_sent_ends_the_request_and_cancels_it_upstream(tmp_path: Path):
    stages = [{"name": "first", "plugin": "passthrough"}, {"name": "second", "plugin": "passthrough"}]
    config = cfg.parse(make_config(tmp_path, stages, {"echo": ["first", "second"]}), "test")
    daemon = Daemon(config, None)
    daemon.bind()
    ctx = zmq.Context()
    try:
        for handle in daemon.roster.handles():
            handle.state = WorkerState.READY  # as if both had said ready; only `first` is really there
        links = daemon.links
        [identity] = [h.identity for h in daemon.roster.handles() if h.name == "first"]
        worker = {}
        for role in ("data", "heartbeat"):
            worker[role] = ctx.socket(zmq.DEALER)
            worker[role].setsockopt(zmq.ROUTING_ID, identity)
            worker[role].connect(links.endpoints[role])
        # it speaks first on both, as a real worker does: until a ROUTER has its identity, a send to it fails
        worker["data"].send_multipart(Message("ack", id="-", stage="first").to_frames())
        worker["heartbeat"].send_multipart(Message("pong").to_frames())
        assert links.data.poll(10_000) and links.heartbeat.poll(10_000)
        daemon.serve_sockets()
        client = ctx.socket(zmq.DEALER)
        client.connect(config.daemon.client_endpoint)
        client.send_multipart(Message("echo", id="r1", final=True, data={"n": 1}).to_frames())
        pump(daemon, lambda: worker["data"].poll(0))
        forwarded = Message.from_frames(worker["data"].recv_multipart())
        assert forwarded.id == "r1" and forwarded.stage == "first"
        worker["data"].send_multipart(forwarded.reply("echo", forwarded.data, stage="first").to_frames())
        pump(daemon, lambda: client.poll(0) and worker["heartbeat"].poll(0))
        final = Message.from_frames(client.recv_multipart())
        assert final.final and final.type == "error" and final.data["code"] == "unavailable"
        cancel = Message.from_frames(worker["heartbeat"].recv_multipart())
        assert cancel.type == "cancel" and cancel.data["request_id"] == "r1"
    finally:
        ctx.destroy(0)
        daemon.journal.use(None)
        daemon.ctx.destroy(0)
