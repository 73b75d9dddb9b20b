"""The worker's heartbeat channel: a thread that answers pings while the main thread computes.

A transcription of a long recording keeps the worker's main thread busy for
minutes; that is work, not a hang. As in jupyter_client, heartbeats therefore
travel on their own socket, answered by their own thread, so a pong proves the
process is alive. Each pong also says what the main thread is busy with and how
far past its request's deadline it is, which is how the supervisor tells a long
job from a stuck one. The same socket brings `cancel`: the thread hands it to
the worker at once, while the main thread is still inside the plugin.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

import zmq

from tcccd.wire.control import Cancel, Pong
from tcccd.wire.protocol import Message


@dataclass(frozen=True)
class Busy:
    """What the main thread is processing right now."""

    stage: str
    request_id: str
    started_at: float
    deadline_at: float | None

    def describe(self, now: float) -> dict[str, Any]:
        overdue_s = 0.0 if self.deadline_at is None else max(0.0, now - self.deadline_at)
        return {"stage": self.stage, "request_id": self.request_id, "busy_s": round(now - self.started_at, 3),
                "overdue_s": round(overdue_s, 3)}


class Watched(Protocol):
    """What the heartbeat thread reads of its worker (tcccd.worker.process.Worker), from its own thread."""

    def health_snapshot(self) -> dict[str, Any]: ...

    def busy_now(self) -> Busy | None: ...

    def on_cancel(self, request_id: str) -> None: ...


class HeartbeatThread(threading.Thread):
    """Answers `ping` with `pong` + the latest health snapshot + the current Busy; passes on `cancel`."""

    def __init__(self, ctx: zmq.Context, endpoint: str, identity: bytes, worker: Watched) -> None:
        super().__init__(name="heartbeat", daemon=True)
        self.ctx = ctx
        self.endpoint = endpoint
        self.identity = identity
        self.worker = worker
        self.stopped = threading.Event()

    def run(self) -> None:
        sock = self.ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.IDENTITY, self.identity)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(self.endpoint)
        try:
            while not self.stopped.is_set():
                if sock.poll(200):
                    message = Message.from_frames(sock.recv_multipart())
                    if message.type == Cancel.TYPE:
                        self.worker.on_cancel(str(message.data.get("request_id", "")))
                    else:
                        sock.send_multipart(self.pong(message).to_frames())
        except zmq.ContextTerminated:
            return  # the worker is exiting
        finally:
            sock.close(0)

    def pong(self, ping: Message) -> Message:
        busy = self.worker.busy_now()
        pong = Pong(**self.worker.health_snapshot(), busy=busy.describe(time.monotonic()) if busy else None)
        return ping.reply(Pong.TYPE, pong.model_dump(mode="json"))

    def stop(self) -> None:
        self.stopped.set()
        if self.is_alive() and self is not threading.current_thread():
            self.join(timeout=1.0)
