"""One typed model per request type: what `data` must hold, checked at the edge before any work.

tcccd.wire.protocol validates the envelope every message shares; this module
validates the type-specific `data` of what clients send, so a wrong field is
refused with `bad_message` instead of reaching a plugin. Request types a config
routes to its own stages (a test echo, a new plugin) are not listed here: their
`data` is the plugin's to check. What tcccd answers has its models beside these
(tcccd.wire.replies, tcccd.wire.status, tcccd.wire.errors); docs/protocol.md's
field reference is generated from all of them (tcccd.wire.reference).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from tcccd.wire.card_events import EVENT_ID
from tcccd.wire.protocol import Message
from tcccd.wire.validation import format_validation_error

PROFILE_NAME = r"^[a-z][a-z0-9_-]{0,31}$"


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Empty(_Data):
    """Only the type counts (and for cancel, the id of the request to end)."""


class AudioRequest(_Data):
    """The audio travels in the payload, its format in the header."""


class Speak(_Data):
    text: StrictStr = Field(min_length=1, max_length=100_000, description="what to say")
    voice: StrictStr | None = Field(None, max_length=128, description="the voice to speak with: the loaded one")
    play: StrictBool = Field(False, description="also play it on the kit's speaker (routes.speak.play)")


class SpeakTokens(_Data):
    """Exactly one of tokens, text or prompt (or none, on a stream's closing message); never a URL."""

    tokens: list[StrictInt] | None = Field(None, max_length=100_000, description="Orpheus audio token ids")
    text: StrictStr | None = Field(None, max_length=1_000_000, description="tokens as `<custom_token_N>` text")
    prompt: StrictStr | None = Field(None, min_length=1, max_length=10_000,
                                     description="text for the configured completions endpoint to turn into "
                                                 "tokens (the endpoint comes from the config only, never a URL)")


class ProfileSet(_Data):
    name: StrictStr = Field(pattern=PROFILE_NAME, description="an installed profile's name, never a path")
    reason: StrictStr = Field("set by a client", max_length=200, description="why, for status and the logs")
    for_s: StrictFloat | StrictInt | None = Field(None, gt=0, le=7 * 24 * 3600,
                                                  description="an override for this long: battery/thermal caps "
                                                              "bypassed until it expires")


class TranscriptsSince(_Data):
    """What a subscriber missed: journalled transcripts after a time and/or a journal_seq."""

    since_ts: StrictFloat | StrictInt = Field(0.0, ge=0, description="epoch seconds: transcripts after this time")
    after_seq: StrictInt = Field(0, ge=0, description="a `journal_seq`: transcripts after it")
    limit: StrictInt = Field(1000, ge=1, le=10000, description="at most this many in one reply, oldest first (the "
                             "reply says when there are more: ask again after its `last_seq`)")


class CardGet(_Data):
    """Every casualty's card, or one."""

    casualty: StrictInt | None = Field(None, ge=1, le=999, description="one casualty's card (1-999); all when absent")
    mission: StrictInt | None = Field(None, ge=1, description="a mission's cards (1 = the first; `card.close` "
                                                           "ends one); the current mission's when absent")


class CardReview(_Data):
    """The medic's or a tablet's verdict on one card event; appended to the card log, never an update."""

    event: StrictStr = Field(pattern=EVENT_ID, description="an event id from the card (`j12.3`: the third event "
                                                          "of journal entry 12)")
    by: StrictStr = Field("medic", min_length=1, max_length=64, description="who reviewed: `medic`, a tablet's name")


class CardClose(_Data):
    """The mission is over: its cards are kept as they are, and the next casualty one starts a new card."""

    by: StrictStr = Field("medic", min_length=1, max_length=64, description="who closed it: `medic`, a tablet's name")


class CardSend(_Data):
    """Send the current mission's cards to the team's TAK network as one CASEVAC (9-line and ZMIST)."""

    casualty: StrictInt | None = Field(None, ge=1, le=999, description="one casualty's CASEVAC (1-999); every "
                                                                      "casualty's when absent")
    by: StrictStr = Field("medic", min_length=1, max_length=64, description="who sends it: `medic`, a tablet's name")


class CardSends(_Data):
    """What was sent to the TAK network, when and to whom."""

    mission: StrictInt | None = Field(None, ge=1, description="one mission's sends; every mission's when absent")


REQUESTS: dict[str, type[BaseModel]] = {
    "transcribe": AudioRequest, "stream": AudioRequest, "speak": Speak, "speak.tokens": SpeakTokens,
    "status": Empty, "ping": Empty, "profile.get": Empty, "profile.set": ProfileSet, "cancel": Empty,
    "capture.mute": Empty, "capture.unmute": Empty, "transcripts.since": TranscriptsSince,
    "card.get": CardGet, "card.confirm": CardReview, "card.reject": CardReview, "card.close": CardClose,
    "card.send": CardSend, "card.sends": CardSends,
}
TAK_TYPES = ("card.send", "card.sends")
CARD_TYPES = ("card.get", "card.confirm", "card.reject", "card.close", *TAK_TYPES)
LOCAL_TYPES = ("status", "ping", "profile.get", "profile.set", "transcripts.since", *CARD_TYPES)


def check_request(message: Message) -> str | None:
    """What is wrong with a client request's data, or None; types routed to custom stages pass."""
    model = REQUESTS.get(message.type)
    if model is None:
        return None
    if message.type == "speak.tokens" and not message.final and not message.data:
        return "data: a speak.tokens message needs tokens, text or prompt (only the closing message may be empty)"
    return _problems(model, message.data)


def _problems(model: type[BaseModel], data: dict[str, Any]) -> str | None:
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return "; ".join(format_validation_error(model, exc, "data"))
    return None
