"""A worker's record judges it by the right clock: starting, frozen, hung; and hears the worker it started, not a
worker of a daemon before it."""

from __future__ import annotations

import os

import zmq

from tcccd import config as cfg
from tcccd.config import StageConfig
from tcccd.core.daemon import Daemon
from tcccd.core.workers import StageRuntime, WorkerHandle
from tcccd.wire.control import Pong
from tcccd.wire.protocol import Message
from tcccd.wire.states import WorkerState
from tests.support.daemon import make_config


def handle(start_timeout_s: float = 30.0, hang_timeout_s: float = 1.0) -> WorkerHandle:
    stage = StageConfig(name="asr", plugin="whisper", start_timeout_s=start_timeout_s, hang_timeout_s=hang_timeout_s)
    record = WorkerHandle("asr", [StageRuntime(stage, {})])
    record.state, record.started_at, record.last_pong_at = WorkerState.STARTING, 100.0, 100.0
    return record


def test_a_starting_worker_still_importing_is_judged_by_its_start_timeout_not_as_frozen():
    worker = handle()
    assert worker.overdue(105.0) is None  # no heartbeat for 5 s, but no heartbeat thread yet either
    assert worker.overdue(131.0) == "not ready within start_timeout_s=30"


def test_once_it_answered_or_said_ready_a_silent_worker_is_frozen():
    worker = handle()
    worker.answered, worker.last_pong_at = True, 102.0
    assert worker.overdue(103.5).startswith("frozen: no heartbeat for 1.5 s")
    ready = handle()
    ready.state = WorkerState.READY  # ready came on the control socket; the heartbeat never did
    assert ready.overdue(101.5).startswith("frozen")


def test_a_worker_still_busy_past_its_request_deadline_is_hung():
    worker = handle()
    worker.state, worker.answered, worker.last_pong_at = WorkerState.READY, True, 110.0
    worker.info = {"busy": {"request_id": "r1", "overdue_s": 1.5}}
    assert worker.overdue(110.2).startswith("hung: still busy with request r1 1.5 s after its deadline")


def test_a_worker_of_a_killed_daemon_still_connected_does_not_take_the_new_workers_place(tmp_path):
    """A daemon killed with SIGKILL leaves its workers alive for up to a second (they end on PDEATHSIG); a new
    daemon in the same runtime directory binds the same sockets and they reconnect to it. Their identity must not
    be the new worker's: a ROUTER refuses a second peer with an identity it holds, and the new worker's pongs
    would be lost until it was killed as frozen."""
    config = cfg.parse(make_config(tmp_path, [{"name": "asr", "plugin": "passthrough"}], {"echo": ["asr"]}), "test")
    daemon = Daemon(config, None)
    daemon.bind()
    ctx = zmq.Context()
    try:
        [worker] = daemon.roster.handles()
        before = worker.identity.replace(f":{os.getpid()}.".encode(), f":{os.getpid() + 1}.".encode())
        assert before != worker.identity  # the same name and generation, another daemon
        peers = []
        for identity in (before, worker.identity):  # the old one connects first
            peer = ctx.socket(zmq.DEALER)
            peer.setsockopt(zmq.ROUTING_ID, identity)
            peer.connect(daemon.links.endpoints["heartbeat"])
            peer.send_multipart(Message(Pong.TYPE, data=Pong(pid=os.getpid()).model_dump(mode="json")).to_frames())
            peers.append(peer)
            assert daemon.links.heartbeat.poll(10_000)
            daemon.serve_sockets()
            if identity == before:
                assert not worker.answered  # not heard as this daemon's worker
        assert worker.answered
        daemon.links.heartbeat.send_multipart([worker.identity, *Message("ping").to_frames()])
        assert peers[1].poll(10_000) and not peers[0].poll(100)  # a ping reaches the new worker, not the old
    finally:
        ctx.destroy(0)
        daemon.journal.use(None)
        daemon.ctx.destroy(0)
