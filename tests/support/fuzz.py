"""Random and mutated client messages, each with what the daemon owes it; shared by the test and the bench.

Every case says whether its id must get exactly one final reply (`owed`): a
message whose header has a readable id and `final: true`, or a stream that will
be closed or time out. Cases without a readable id are owed nothing; no id may
ever get two finals.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass

NASTY_VALUES = [None, "x", -1, 2**64, 1.5, True, [], {}, {"a": [[[]]]}, "NaN", "", "é" * 300, [1] * 50, 0]
FIELDS = ("v", "type", "seq", "ts", "final", "deadline_s", "stream", "stage", "audio", "data")
TYPES = ("echo", "ping", "status", "profile.get", "nope", "stream", "speak", "cancel", "profile.set")


@dataclass
class Case:
    frames: list[list[bytes]]  # one or several multipart messages, sent in order
    request_id: str | None
    owed: bool


def _header(kind: str, request_id: str, **fields: object) -> dict[str, object]:
    return {"v": 1, "type": kind, "id": request_id, "seq": 0, **fields}


def _encode(header: dict[str, object], payload: bytes | None = None) -> list[bytes]:
    frames = [json.dumps(header).encode()]
    return frames + [payload] if payload is not None else frames


def cases(count: int, seed: int = 9) -> Iterator[Case]:
    rng = random.Random(seed)
    used: list[str] = []
    for n in range(count):
        request_id = f"f{seed}-{n}"
        roll = rng.random()
        if roll < 0.25:  # a valid one-message request of a random type
            kind = rng.choice(("echo", "ping", "status", "profile.get", "nope"))
            payload = rng.randbytes(rng.randrange(0, 64)) if rng.random() < 0.5 else None
            yield Case([_encode(_header(kind, request_id, final=True, data={"n": n}), payload)], request_id, True)
        elif roll < 0.35:  # a stream, closed or left to time out
            chunks = [_encode(_header("stream", request_id, seq=i, audio={"encoding": "pcm_s16le"}), b"\0\0" * 80)
                      for i in range(rng.randrange(1, 4))]
            if rng.random() < 0.7:
                chunks.append(_encode(_header("stream", request_id, seq=len(chunks), final=True), b""))
            yield Case(chunks, request_id, True)
        elif roll < 0.65:  # a valid request with one field replaced by something nasty
            header = _header(rng.choice(TYPES), request_id, final=True, data={"n": n})
            header[rng.choice(FIELDS)] = rng.choice(NASTY_VALUES)
            owed = header.get("final") is True
            yield Case([_encode(header)], request_id, owed)
        elif roll < 0.75:  # a valid header in the wrong number of frames
            header = _header("echo", request_id, final=True)
            yield Case([_encode(header) + [b"x", b"y"][: rng.randrange(1, 3)]], request_id, True)
        elif roll < 0.85 and used:  # a late message for a request that already ended
            old = rng.choice(used)
            yield Case([_encode(_header("echo", old, seq=1, final=True))], old, False)
        elif roll < 0.93:  # random bytes
            yield Case([[rng.randbytes(rng.randrange(0, 40)) for _ in range(rng.randrange(1, 4))]], None, False)
        else:  # random JSON, deep nesting, huge headers
            choice = rng.randrange(3)
            raw = [b"[" * 5000 + b"]" * 5000, json.dumps({"v": 1, "id": 7, "type": None}).encode(),
                   json.dumps({"v": 1, "type": "echo", "id": request_id, "final": True,
                               "data": {"x": "y" * 70_000}}).encode()][choice]
            yield Case([[raw]], None, False)
        if roll < 0.75:
            used.append(request_id)
