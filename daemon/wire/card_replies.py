"""The casualty card's replies on the client socket (`card.get`, `card.confirm`, `card.reject`) and the `card` topic.

A card grows with the mission (every entry carries the words it came from), so
it can outgrow the 64 KiB JSON header: the cards always travel as JSON in the
payload frame (`application/json`, the card schema: daemon/card/exports/
card.schema.json; every field in docs/card.md), and `data` says what the
payload holds. `CardsReply.cards_of(message)` reads it back, typed. The requests' models are with the others
(tcccd.wire.messages).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tcccd.wire.card import CardSet
from tcccd.wire.model import Float, Int, Reply, ReplyInvalid, Str
from tcccd.wire.protocol import Message

CARD_MEDIA_TYPE = "application/json"


class CardsReply(Reply):
    """Final: the answer to card.get. The cards are in the payload (a CardSet as JSON), not in `data`."""

    TYPE: ClassVar[str] = "cards"
    casualties: list[Int] = Field(description="the casualties whose cards the payload holds, in order")
    events: Int = Field(description="events in the card log (all casualties, all missions)")
    mission: Int = Field(description="the mission the cards belong to (1 = the first)")
    current_mission: Int = Field(description="the mission under way (missions before it are closed)")
    media_type: Str = Field(description="the payload's format: `application/json`, a CardSet")

    @staticmethod
    def cards_of(message: Message) -> CardSet:
        """The CardSet in a card reply's or event's payload; ReplyInvalid when there is none or it is not one."""
        if not message.payload:
            raise ReplyInvalid(f"a {message.type!r} reply carries its cards in the payload, and this one has none")
        try:
            return CardSet.model_validate_json(message.payload)
        except ValueError as exc:
            raise ReplyInvalid(f"the {message.type!r} payload is not a card set: {exc}") from None


class CardReviewed(Reply):
    """Final: the answer to card.confirm and card.reject, once the review is on disk. The payload holds the
    reviewed casualty's card as it now is (a CardSet of one)."""

    TYPE: ClassVar[str] = "card.review"
    event: Str = Field(description="the event reviewed")
    action: Literal["confirm", "reject"] = Field(description="what the review said")
    casualty: Int = Field(description="the casualty the event belongs to")
    by: Str = Field(description="who reviewed")
    ts: Float = Field(description="when the review was logged (epoch seconds)")
    media_type: Str = Field(description="the payload's format: `application/json`, a CardSet")


class CardClosed(Reply):
    """Final: the answer to card.close, once the mission's boundary is on disk. The payload holds the closed
    mission's cards as they were (a CardSet); the current mission's cards start empty."""

    TYPE: ClassVar[str] = "card.closed"
    mission: Int = Field(description="the mission closed (1 = the first)")
    through_journal_seq: Int = Field(description="the last journal entry it holds: transcripts after it belong "
                                                 "to the next mission")
    casualties: list[Int] = Field(description="the casualties with a card in it")
    by: Str = Field(description="who closed it")
    ts: Float = Field(description="when (epoch seconds)")
    media_type: Str = Field(description="the payload's format: `application/json`, a CardSet")


class CardUpdate(Reply):
    """Event (topic `card`): one casualty's card changed (events logged from a transcript, or a review). Published
    after the change is on disk; the payload holds the card as it now is (a CardSet of one)."""

    TYPE: ClassVar[str] = "card"
    casualty: Int = Field(description="whose card changed")
    cause: Literal["events", "review", "closed"] = Field(description="new events from a transcript, a review, or "
                                                                    "the mission closed (the cards start empty)")
    changed: list[Str] = Field(description="the ids of the events logged or reviewed")
    journal_seq: Int | None = Field(None, description="events: the transcript they came from (`journal_seq`)")
    mission: Int = Field(description="the mission the card belongs to")
    media_type: Str = Field(description="the payload's format: `application/json`, a CardSet")


def card_payload(cards: CardSet) -> bytes:
    return cards.model_dump_json().encode()
