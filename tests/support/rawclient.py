"""A client that speaks raw frames and keeps every reply: the witness for "exactly one final reply".

`tcccd.wire.client.Client` stops reading a request at its first final reply and
drops replies for ids it no longer tracks, so it cannot see a second final.
This one sends whatever bytes a test builds and records every frame that comes
back, by request id, in arrival order.
"""

from __future__ import annotations

import collections
import json
import time
from typing import Any

import zmq


class RawClient:
    def __init__(self, endpoint: str, curve: Any = None, routing_id: bytes | None = None) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        if routing_id is not None:
            self.sock.setsockopt(zmq.ROUTING_ID, routing_id)
        self.sock.setsockopt(zmq.RCVHWM, 0)
        self.sock.setsockopt(zmq.SNDHWM, 0)
        if curve is not None:
            curve.apply(self.sock)
        self.sock.connect(endpoint)
        self.replies: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        self.frames: list[list[bytes]] = []

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.ctx.destroy(linger=0)

    def send_frames(self, frames: list[bytes]) -> None:
        self.sock.send_multipart(frames)

    def send(self, header: dict[str, Any], payload: bytes | None = None) -> None:
        frames = [json.dumps(header).encode()]
        if payload is not None:
            frames.append(payload)
        self.send_frames(frames)

    def collect(self, quiet_s: float = 0.5, until: Any = None, timeout_s: float = 60.0) -> None:
        """Read replies until `until()` holds (then a further quiet period) or nothing comes for `quiet_s`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            done = until is not None and until()
            if not self.sock.poll(quiet_s * 1000 if (until is None or done) else 200):
                if until is None or done:
                    return
                continue
            frames = self.sock.recv_multipart()
            self.frames.append(frames)
            header = json.loads(frames[0])
            header["_payload"] = frames[1] if len(frames) > 1 else None
            self.replies[header["id"]].append(header)

    def finals(self, request_id: str) -> list[dict[str, Any]]:
        return [r for r in self.replies.get(request_id, []) if r.get("final")]

    def final(self, request_id: str) -> dict[str, Any]:
        """The one final reply of `request_id`; fails when there are none or several."""
        finals = self.finals(request_id)
        assert len(finals) == 1, f"request {request_id}: {len(finals)} final replies: {finals}"
        return finals[0]


def header(type: str, request_id: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "type": type, "id": request_id, "seq": 0, **fields}
