"""The card stage on the plugin kit: `card.extract` (a final transcript and its context) in, `card.events` out.

Deterministic rules, no model, no state between requests: everything a request
needs travels in it (tcccd.wire.card_stage), so a restarted worker gives the
same events for the same transcript. The daemon appends the events to the card
log and keeps the current casualty; this stage only reads.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import ValidationError

from tcccd.kit.plugin import Plugin, PluginError, PluginParams
from tcccd.plugins.card.extract import extract
from tcccd.wire.card_stage import EVENTS_TYPE, EXTRACT_TYPE, CardExtract
from tcccd.wire.protocol import Message
from tcccd.wire.validation import format_validation_error


class CardParams(PluginParams):
    pass


class CardPlugin(Plugin):
    name = "card"
    inputs = (EXTRACT_TYPE,)
    outputs = (EVENTS_TYPE,)
    Params = CardParams

    def setup(self) -> None:
        import text_to_num  # noqa: F401 - fail at setup, not on the first transcript, when the card extra is missing

    def warmup(self) -> None:
        extract(CardExtract(text="Pulse 110.", request_id="warmup", source="client", utterance_ts=1.0,
                            utc_offset_min=0, casualty=1))

    def process(self, message: Message) -> Iterator[Message]:
        if message.type != EXTRACT_TYPE:
            raise PluginError(f"the card stage reads {EXTRACT_TYPE!r} messages, not {message.type!r}")
        try:
            request = CardExtract.model_validate(message.data)
        except ValidationError as exc:
            raise PluginError("; ".join(format_validation_error(CardExtract, exc, "data")),
                              code="bad_message") from None
        yield message.reply(EVENTS_TYPE, extract(request).model_dump(mode="json"), final=True)
