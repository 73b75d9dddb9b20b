"""A worker's record judges it by the right clock: starting, frozen, hung."""

from __future__ import annotations

from tcccd.config import StageConfig
from tcccd.core.workers import StageRuntime, WorkerHandle
from tcccd.wire.states import WorkerState


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
