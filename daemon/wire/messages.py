"""One typed model per message type: what `data` must hold, checked at the edge before any work.

tcccd.wire.protocol validates the envelope every message shares; this module
validates the type-specific `data` of what clients send (requests) and of what
tcccd answers (replies), so a wrong field is refused with `bad_message` instead
of reaching a plugin. Request types a config routes to its own stages (a test
echo, a new plugin) are not listed here: their `data` is the plugin's to check.

ERROR_CODES is the one list of codes that may reach the wire; docs/protocol.md
documents each, and a test holds the two together.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from tcccd.wire.protocol import Message
from tcccd.wire.validation import format_validation_error

PROFILE_NAME = r"^[a-z][a-z0-9_-]{0,31}$"

ERROR_CODES: dict[str, str] = {
    "bad_message": "the message is malformed: header, frames or a field of data",
    "bad_request": "a well-formed message that makes no sense here",
    "bad_audio": "the audio payload is empty, corrupt or not audio",
    "bad_tokens": "a speak.tokens request carried unusable tokens",
    "no_tokens": "a speak.tokens request ended before one frame of audio tokens",
    "too_long": "the input is over a length limit (audio seconds, frames, text)",
    "too_large": "the payload is over max_request_bytes",
    "bad_profile": "the profile is not installed, or a plugin refused its parameters",
    "no_route": "no stage serves this request type",
    "no_stage": "a worker was sent a message for a stage it does not host",
    "stage_disabled": "a stage of the route is disabled",
    "stage_failed": "a stage of the route spent its restart budget; it is retried later",
    "unavailable": "a stage of the route is starting or restarting",
    "busy": "a queue or a cap on open requests is full",
    "deadline_exceeded": "no result within the request's deadline",
    "stream_idle": "a live stream received no chunk for stream_idle_timeout_s",
    "cancelled": "the client cancelled the request",
    "worker_lost": "the worker died or hung while it held the request",
    "shutting_down": "the daemon is stopping",
    "reloading": "the daemon reloaded a config that changed this request's stages",
    "plugin_error": "the plugin raised on this input",
    "bad_text": "speak text is empty or not text",
    "bad_voice": "the requested voice is not the one loaded",
    "bad_config": "the stage's configuration cannot serve this request (a plugin's own check)",
    "bad_model": "the stage's model files are unusable",
    "bad_weights": "the stage's weights are missing or unusable",
    "no_weights": "the stage has no weights to run",
    "no_voice": "the stage has no voice to speak with",
    "upstream_unreachable": "the configured completions endpoint does not answer",
    "upstream_timeout": "the configured completions endpoint was too slow",
    "upstream_error": "the configured completions endpoint answered with an error",
    "no_device": "the capture stage has no audio device (unplugged, no sound card); it retries by itself",
}


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Empty(_Data):
    """status, ping, profile.get, cancel: nothing in data."""


class AudioRequest(_Data):
    """transcribe and stream: the audio travels in the payload and its format in the header."""


class Speak(_Data):
    text: StrictStr = Field(min_length=1, max_length=100_000)
    voice: StrictStr | None = Field(None, max_length=128)
    play: StrictBool = Field(False, description="also play it on the kit's speaker (routes.speak.play)")


class SpeakTokens(_Data):
    """Exactly one of tokens, text or prompt (or none, on a stream's closing message); never a URL."""

    tokens: list[StrictInt] | None = Field(None, max_length=100_000)
    text: StrictStr | None = Field(None, max_length=1_000_000)
    prompt: StrictStr | None = Field(None, min_length=1, max_length=10_000)


class ProfileSet(_Data):
    name: StrictStr = Field(pattern=PROFILE_NAME)
    reason: StrictStr = Field("set by a client", max_length=200)
    for_s: StrictFloat | StrictInt | None = Field(None, gt=0, le=7 * 24 * 3600,
                                                  description="an override for this long: battery/thermal caps "
                                                              "bypassed until it expires")


class TranscriptsSince(_Data):
    """What a subscriber missed: journalled transcripts after a time and/or a journal_seq."""

    since_ts: StrictFloat | StrictInt = Field(0.0, ge=0)
    after_seq: StrictInt = Field(0, ge=0)
    limit: StrictInt = Field(10000, ge=1, le=10000)


class ErrorData(_Data):
    code: StrictStr
    message: StrictStr


REQUESTS: dict[str, type[BaseModel]] = {
    "transcribe": AudioRequest, "stream": AudioRequest, "speak": Speak, "speak.tokens": SpeakTokens,
    "status": Empty, "ping": Empty, "profile.get": Empty, "profile.set": ProfileSet, "cancel": Empty,
    "capture.mute": Empty, "capture.unmute": Empty, "transcripts.since": TranscriptsSince,
}
LOCAL_TYPES = ("status", "ping", "profile.get", "profile.set", "transcripts.since")


def check_request(message: Message) -> str | None:
    """What is wrong with a client request's data, or None; types routed to custom stages pass."""
    model = REQUESTS.get(message.type)
    if model is None:
        return None
    if message.type == "speak.tokens" and not message.final and not message.data:
        return "data: a speak.tokens message needs tokens, text or prompt (only the closing message may be empty)"
    return _problems(model, message.data)


def check_error(data: dict[str, Any]) -> str | None:
    problem = _problems(ErrorData, data)
    if problem is None and data["code"] not in ERROR_CODES:
        return f"data.code: {data['code']!r} is not a documented error code"
    return problem


def _problems(model: type[BaseModel], data: dict[str, Any]) -> str | None:
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return "; ".join(format_validation_error(model, exc, "data"))
    return None
