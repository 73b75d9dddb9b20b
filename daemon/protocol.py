"""The wire format: one envelope for every message on every socket.

A message is two ZeroMQ frames: a UTF-8 JSON header and an optional binary
payload (PCM, WAV bytes). Every socket in tcccd (client, worker data, worker
control, events) carries this envelope, so a client in any language needs only
a JSON library and ZeroMQ. docs/protocol.md is the normative description.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

PROTOCOL_VERSION = 1

ENCODINGS = ("pcm_s16le", "pcm_f32le", "wav")


class ProtocolError(ValueError):
    """A peer sent something that is not a valid tcccd message."""


@dataclass(frozen=True)
class AudioFormat:
    """How the payload's bytes are to be read."""

    encoding: str = "pcm_s16le"
    sample_rate_hz: int = 16000
    channels: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"encoding": self.encoding, "sample_rate_hz": self.sample_rate_hz, "channels": self.channels}

    @classmethod
    def from_dict(cls, data: Any) -> AudioFormat:
        if not isinstance(data, dict):
            raise ProtocolError(f"audio: expected an object, got {data!r}")
        fmt = cls(
            encoding=data.get("encoding", "pcm_s16le"),
            sample_rate_hz=data.get("sample_rate_hz", 16000),
            channels=data.get("channels", 1),
        )
        if fmt.encoding not in ENCODINGS:
            raise ProtocolError(f"audio.encoding: expected one of {', '.join(ENCODINGS)}, got {fmt.encoding!r}")
        if not isinstance(fmt.sample_rate_hz, int) or not 1000 <= fmt.sample_rate_hz <= 384000:
            raise ProtocolError(f"audio.sample_rate_hz: expected an integer 1000..384000, got {fmt.sample_rate_hz!r}")
        if not isinstance(fmt.channels, int) or not 1 <= fmt.channels <= 32:
            raise ProtocolError(f"audio.channels: expected an integer 1..32, got {fmt.channels!r}")
        return fmt

    @property
    def bytes_per_frame(self) -> int:
        return self.channels * (2 if self.encoding == "pcm_s16le" else 4)


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Message:
    """One envelope. `final` marks the last message of a request, in either direction."""

    type: str
    id: str = field(default_factory=new_id)
    data: dict[str, Any] = field(default_factory=dict)
    payload: bytes | None = None
    audio: AudioFormat | None = None
    stream: str | None = None
    seq: int = 0
    final: bool = False
    ts: float = field(default_factory=time.time)
    deadline_s: float | None = None
    stage: str | None = None

    def reply(self, type: str, data: dict[str, Any] | None = None, **fields: Any) -> Message:
        """A message that answers this one: same request id and stream."""
        return Message(type=type, id=self.id, stream=self.stream, data=data or {}, **fields)

    def error(self, code: str, text: str, final: bool = True) -> Message:
        return self.reply("error", {"code": code, "message": text}, final=final)

    def header(self) -> dict[str, Any]:
        head: dict[str, Any] = {"v": PROTOCOL_VERSION, "type": self.type, "id": self.id, "seq": self.seq,
                                "ts": self.ts}
        for key in ("stream", "deadline_s", "stage"):
            value = getattr(self, key)
            if value is not None:
                head[key] = value
        if self.final:
            head["final"] = True
        if self.data:
            head["data"] = self.data
        if self.audio is not None:
            head["audio"] = self.audio.to_dict()
        return head

    def to_frames(self) -> list[bytes]:
        frames = [json.dumps(self.header(), separators=(",", ":")).encode()]
        if self.payload is not None:
            frames.append(self.payload)
        return frames

    @classmethod
    def from_frames(cls, frames: list[bytes] | list[Any]) -> Message:
        if not 1 <= len(frames) <= 2:
            raise ProtocolError(f"expected 1 or 2 frames (JSON header, optional payload), got {len(frames)}")
        head = _parse_header(bytes(frames[0]))
        payload = bytes(frames[1]) if len(frames) == 2 else None
        audio = AudioFormat.from_dict(head["audio"]) if "audio" in head else None
        return cls(
            type=head["type"], id=head["id"], data=head.get("data") or {}, payload=payload, audio=audio,
            stream=head.get("stream"), seq=int(head.get("seq", 0)), final=bool(head.get("final", False)),
            ts=float(head.get("ts", time.time())), deadline_s=head.get("deadline_s"), stage=head.get("stage"),
        )


def _parse_header(raw: bytes) -> dict[str, Any]:
    try:
        head = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"header: expected a JSON object, could not parse it ({exc})") from None
    if not isinstance(head, dict):
        raise ProtocolError(f"header: expected a JSON object, got {type(head).__name__}")
    version = head.get("v")
    if version != PROTOCOL_VERSION:
        raise ProtocolError(f"header.v: expected protocol version {PROTOCOL_VERSION}, got {version!r}")
    for key in ("type", "id"):
        if not isinstance(head.get(key), str) or not head[key]:
            raise ProtocolError(f"header.{key}: expected a non-empty string, got {head.get(key)!r}")
    if "data" in head and not isinstance(head["data"], dict):
        raise ProtocolError(f"header.data: expected an object, got {head['data']!r}")
    deadline = head.get("deadline_s")
    if deadline is not None and (not isinstance(deadline, (int, float)) or deadline <= 0):
        raise ProtocolError(f"header.deadline_s: expected a number > 0, got {deadline!r}")
    return head
