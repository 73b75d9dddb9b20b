"""The error reply, and the one list of codes that may reach the wire.

ERROR_CODES is what tcccd promises a client can get: docs/protocol.md documents
each code, and a test holds the two together. `Message.error` builds every error
through `ErrorReply`, so a code outside the list fails where it is made, not in a
client; a plugin's own undocumented code is turned into `plugin_error` by the
plugin kit (tcccd.kit.stage) before it leaves the worker.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, Field

from tcccd.wire.model import Reply, Str

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
    "unknown_casualty": "card.get or card.send named a casualty that has no card",
    "unknown_event": "card.confirm or card.reject named an event id that is not on the current mission's cards",
    "unknown_mission": "card.get named a mission that has not begun",
    "tak_off": "card.send while the TAK link is off (tak.enabled: false)",
    "no_position": "card.send with no position known (gpsd, the medic's TAK device, tak.fixed_point): nothing sent",
    "reply_too_large": "the reply's header would be over the protocol's 64 KiB limit: the daemon sent this instead",
}


def _documented(code: str) -> str:
    if code not in ERROR_CODES:
        raise ValueError(f"{code!r} is not a documented error code (documented: {', '.join(ERROR_CODES)})")
    return code


ErrorCode = Annotated[Str, AfterValidator(_documented)]


class ErrorReply(Reply):
    """Final, it ends the request; not final, a notice and the request goes on."""

    TYPE: ClassVar[str] = "error"
    code: ErrorCode = Field(description="one of the codes below")
    message: Str = Field(description="what was wrong and what is accepted")
    reason: Literal["memory"] | None = Field(None, description="with `busy`: tcccd is over its memory budget")
