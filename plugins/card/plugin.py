"""The card stage on the plugin kit: `card.extract` (a final transcript and its context) in, `card.events` out.

Deterministic rules, no model, no state between requests: everything a request
needs travels in it (tcccd.wire.card_stage), so a restarted worker gives the
same events for the same transcript. The daemon appends the events to the card
log and keeps the current casualty; this stage only reads. A request or reply
too big for the JSON header (a long recording's transcript, its many events)
carries the same JSON in the payload frame instead of `data`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field, ValidationError

from tcccd.kit.plugin import Plugin, PluginError, PluginParams
from tcccd.plugins.card.context_rules import ContextRules, ContextRulesError
from tcccd.plugins.card.extract import CardReader
from tcccd.wire.card_stage import EVENTS_TYPE, EXTRACT_TYPE, CardExtract
from tcccd.wire.protocol import Message
from tcccd.wire.validation import format_validation_error

IN_DATA_BYTES = 48 * 1024  # a body over this travels as JSON in the payload frame (the header is capped at 64 KiB)


class CardParams(PluginParams):
    context_rules: Path | None = Field(None, description="the assertion rules (triggers, scopes, terminators) as "
                                                         "YAML; null: the packaged profiles/card/context.yaml")


class CardPlugin(Plugin):
    name = "card"
    inputs = (EXTRACT_TYPE,)
    outputs = (EVENTS_TYPE,)
    Params = CardParams

    def setup(self) -> None:
        try:
            self.reader = CardReader(ContextRules.load(self.params.context_rules))
        except ContextRulesError as exc:
            raise PluginError(str(exc), code="bad_config") from None

    def warmup(self) -> None:
        self.reader.extract(CardExtract(text="Pulse 110.", request_id="warmup", source="client", utterance_ts=1.0,
                                        utc_offset_min=0, casualty=1))

    def process(self, message: Message) -> Iterator[Message]:
        if message.type != EXTRACT_TYPE:
            raise PluginError(f"the card stage reads {EXTRACT_TYPE!r} messages, not {message.type!r}")
        where = "payload" if message.payload else "data"
        try:
            request = CardExtract.model_validate_json(message.payload) if message.payload else \
                CardExtract.model_validate(message.data)
        except ValidationError as exc:
            raise PluginError("; ".join(format_validation_error(CardExtract, exc, where)),
                              code="bad_message") from None
        result = self.reader.extract(request)
        body = result.model_dump(mode="json")
        if len(json.dumps(body)) <= IN_DATA_BYTES:
            yield message.reply(EVENTS_TYPE, body, final=True)
        else:  # many events: past what the 64 KiB JSON header holds
            yield message.reply(EVENTS_TYPE, final=True, payload=result.model_dump_json().encode())
