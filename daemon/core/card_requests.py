"""`card.get`, `card.confirm` and `card.reject`: the cards as they are, and the medic's or a tablet's review.

Answered by the daemon itself from the card projection (no worker): a read is
the cards in memory, a review is appended to the card log (on disk before the
reply, like every event) and then applied to the projection, so the card shows
the entry confirmed, or takes it off (rejecting a correction brings back what
it replaced), and the `card` topic publishes the casualty's card again.
Replies carry the cards in the payload (tcccd.wire.card_replies).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tcccd.record.card_log import CardLog, UnknownEvent
from tcccd.record.card_projection import Projector
from tcccd.wire.card import CardSet
from tcccd.wire.card_events import Review
from tcccd.wire.card_replies import CARD_MEDIA_TYPE, CardReviewed, CardsReply, CardUpdate, card_payload
from tcccd.wire.messages import CardGet, CardReview
from tcccd.wire.protocol import Message

NO_JOURNAL = "the casualty card lives in the transcript journal's file, and the journal is disabled " \
             "(transcripts.enabled: false)"


class CardRequests:
    def __init__(self, card_log: Callable[[], CardLog | None], projector: Callable[[], Projector],
                 publish_card: Callable[[int, CardUpdate], None]) -> None:
        self.card_log = card_log
        self.projector = projector
        self.publish_card = publish_card

    def answer(self, message: Message) -> Message:
        """The reply to one card request (its data already checked at the edge, tcccd.wire.messages)."""
        log = self.card_log()
        if log is None:
            return message.error("no_route", NO_JOURNAL)
        if message.type == "card.get":
            return self._get(message, log)
        return self._review(message, log)

    def _get(self, message: Message, log: CardLog) -> Message:
        ask = CardGet.model_validate(message.data)
        cards = self.projector().cards()
        if ask.casualty is not None:
            picked = [card for card in cards.cards if card.casualty == ask.casualty]
            if not picked:
                known = ", ".join(str(card.casualty) for card in cards.cards) or "none yet"
                return message.error("unknown_casualty", f"no card for casualty {ask.casualty}; casualties with a "
                                                         f"card: {known} (leave casualty out for every card)")
            cards = CardSet(cards=picked)
        reply = CardsReply(casualties=[card.casualty for card in cards.cards], events=log.count(),
                           media_type=CARD_MEDIA_TYPE)
        return message.reply(CardsReply.TYPE, reply.to_data(), final=True, payload=card_payload(cards))

    def _review(self, message: Message, log: CardLog) -> Message:
        ask = CardReview.model_validate(message.data)
        review = Review(event=ask.event, action="confirm" if message.type == "card.confirm" else "reject",
                        ts=time.time(), by=ask.by)
        try:
            log.review(review)
        except UnknownEvent as exc:
            return message.error("unknown_event", str(exc))
        card = self.projector().review(review)
        if card is None:  # in the log but not in this projection: cannot happen while both come from one log
            return message.error("unknown_event", f"event {ask.event!r} is in the log but on no card")
        self.publish_card(card.casualty, CardUpdate(casualty=card.casualty, cause="review", changed=[review.event],
                                                               media_type=CARD_MEDIA_TYPE))
        reply = CardReviewed(event=review.event, action=review.action, casualty=card.casualty, by=review.by,
                             ts=review.ts, media_type=CARD_MEDIA_TYPE)
        return message.reply(CardReviewed.TYPE, reply.to_data(), final=True,
                             payload=card_payload(CardSet(cards=[card])))
