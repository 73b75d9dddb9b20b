"""The wire format: one envelope for every message on every socket.

A message is two ZeroMQ frames: a UTF-8 JSON header and an optional binary
payload (PCM, WAV bytes). Every socket in tcccd (client, worker data, worker
control, events) carries this envelope, so a client in any language needs only
a JSON library and ZeroMQ. docs/protocol.md is the normative description.

The header is validated here, at the edge, by one pydantic model (`Envelope`):
limits on size and nesting are checked before JSON is parsed into objects, so
nothing a peer sends can raise anything but `ProtocolError`. The per-type
checks of `data` live in tcccd.wire.messages.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from tcccd.wire.errors import ErrorReply
from tcccd.wire.validation import format_validation_error

PROTOCOL_VERSION = 1
ENCODINGS = ("pcm_s16le", "pcm_f32le", "wav")
MAX_HEADER_BYTES = 64 * 1024
MAX_NESTING = 16
ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
TYPE_PATTERN = r"^[a-z][a-z0-9_.-]{0,63}$"
MAX_DEADLINE_S = 24 * 3600.0

FiniteFloat = Annotated[float, Field(allow_inf_nan=False, strict=True)]


class ProtocolError(ValueError):
    """A peer sent something that is not a valid tcccd message.

    `request_id` is the header's id when it could be read as a valid id, so the
    error can be answered under it; None when it could not (then the message is
    dropped and counted).
    """

    def __init__(self, text: str, request_id: str | None = None) -> None:
        super().__init__(text)
        self.request_id = request_id


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AudioModel(_Strict):
    encoding: Literal["pcm_s16le", "pcm_f32le", "wav"] = "pcm_s16le"
    sample_rate_hz: StrictInt = Field(16000, ge=1000, le=384000)
    channels: StrictInt = Field(1, ge=1, le=32)


class Envelope(_Strict):
    """The header every message carries; unknown keys are refused so a typo is not silently ignored."""

    v: Literal[1]
    type: str = Field(pattern=TYPE_PATTERN)
    id: str = Field(pattern=ID_PATTERN)
    seq: StrictInt = Field(0, ge=0, le=2**53)
    ts: FiniteFloat = Field(default_factory=time.time)
    final: StrictBool = False
    deadline_s: FiniteFloat | None = Field(None, gt=0, le=MAX_DEADLINE_S)
    stream: str | None = Field(None, max_length=128)
    stage: str | None = Field(None, pattern=TYPE_PATTERN)
    audio: AudioModel | None = None
    data: dict[str, Any] = Field(default_factory=dict)


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
        try:
            model = AudioModel.model_validate(data)
        except ValidationError as exc:
            raise ProtocolError("; ".join(format_validation_error(AudioModel, exc, "audio"))) from None
        return cls(model.encoding, model.sample_rate_hz, model.channels)

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

    @classmethod
    def event(cls, model: Any) -> Message:
        """A reply model (tcccd.wire.replies, tcccd.wire.alerts) as an event to publish: its type and data."""
        return cls(model.TYPE, data=model.to_data())

    def reply(self, type: str, data: dict[str, Any] | None = None, **fields: Any) -> Message:
        """A message that answers this one: same request id and stream."""
        return Message(type=type, id=self.id, stream=self.stream, data=data or {}, **fields)

    def error(self, code: str, text: str, final: bool = True, **data: Any) -> Message:
        """An error reply, built through ErrorReply: a code that is not documented raises ReplyInvalid here."""
        return self.reply("error", ErrorReply.from_data({"code": code, "message": text, **data}).to_data(),
                          final=final)

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
        frames = [json.dumps(self.header(), separators=(",", ":"), allow_nan=False).encode()]
        if self.payload is not None:
            frames.append(self.payload)
        return frames

    @classmethod
    def from_frames(cls, frames: list[bytes] | list[Any]) -> Message:
        """The message in `frames`; any fault raises ProtocolError and nothing else."""
        if not frames:
            raise ProtocolError("expected 1 or 2 frames (JSON header, optional payload), got none")
        raw = _parse_json(bytes(frames[0]))
        if len(frames) > 2:
            raise ProtocolError(f"expected 1 or 2 frames (JSON header, optional payload), got {len(frames)}",
                                readable_id(raw))
        try:
            head = Envelope.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(format_validation_error(Envelope, exc, "header"))
            raise ProtocolError(problems, readable_id(raw)) from None
        audio = AudioFormat(**head.audio.model_dump()) if head.audio is not None else None
        return cls(
            type=head.type, id=head.id, data=head.data, payload=bytes(frames[1]) if len(frames) == 2 else None,
            audio=audio, stream=head.stream, seq=head.seq, final=head.final,
            ts=head.ts, deadline_s=head.deadline_s, stage=head.stage,
        )


def too_large_reply(message: Message, header_bytes: int) -> Message:
    """What goes instead of `message` when its header is over MAX_HEADER_BYTES, which every reader refuses: a
    `reply_too_large` error under its id that says so, so no peer gets a frame it must refuse. A body that can
    grow belongs in the payload frame, which has no such limit."""
    text = (f"the {message.type!r} reply's header would be {header_bytes} bytes, over the protocol's limit of "
            f"{MAX_HEADER_BYTES}: it was not sent (tcccd keeps growing lists in the payload; report this)")
    return message.error("reply_too_large", text, final=message.final)


def readable_id(raw: Any) -> str | None:
    """The header's id when it is a valid id string: an error can then be answered under it."""
    value = raw.get("id") if isinstance(raw, dict) else None
    return value if isinstance(value, str) and _ID_RE.fullmatch(value) else None


_ID_RE = re.compile(ID_PATTERN)


def _parse_json(raw: bytes) -> Any:
    """The header as JSON objects, after the size and nesting limits (checked on bytes, before parsing)."""
    if len(raw) > MAX_HEADER_BYTES:
        raise ProtocolError(f"header: {len(raw)} bytes is over the limit of {MAX_HEADER_BYTES}")
    depth = _nesting(raw)
    if depth > MAX_NESTING:
        raise ProtocolError(f"header: nested {depth} levels deep; at most {MAX_NESTING} are accepted")
    try:
        head = json.loads(raw, parse_constant=_refuse_constant)
    except _NonFinite as exc:  # valid JSON to Python, not to the spec: answer under the id if there is one
        raise ProtocolError(f"header: {exc} is not a JSON number; send finite numbers",
                            readable_id(json.loads(raw, parse_constant=lambda _name: None))) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"header: expected a JSON object, could not parse it ({exc})") from None
    if not isinstance(head, dict):
        raise ProtocolError(f"header: expected a JSON object, got {type(head).__name__}")
    return head


class _NonFinite(Exception):
    """NaN or Infinity in a header: Python's json reads them, JSON does not have them."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


def _nesting(raw: bytes) -> int:
    """Deepest bracket nesting outside strings: a cheap scan that stops json.loads from recursing deep."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_NESTING:
                return deepest
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest
