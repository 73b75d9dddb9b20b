"""`card.get`, `card.confirm`, `card.reject` and `card.close`: the cards, the review, the end of a mission.

Answered by the daemon itself from the card projection (no worker): a read is
the cards in memory (a closed mission's are rebuilt from the log), a review is
appended to the card log (on disk before the reply, like every event) and then
applied to the projection, so the card shows the entry confirmed, or takes it
off (rejecting a correction brings back what it replaced), and the `card` topic
publishes the casualty's card again. Only the current mission's cards take
reviews: a closed mission's are kept as they were handed over. A close appends
the mission's boundary, then the keeper starts the next mission's empty cards.
Replies carry the cards in the payload (tcccd.wire.card_replies).
"""

from __future__ import annotations

import time

from tcccd.card.log import CardLog, UnknownEvent
from tcccd.card.missions import events_of
from tcccd.card.projection import project
from tcccd.card.store import CardStore
from tcccd.wire.card import CardSet
from tcccd.wire.card_events import Review
from tcccd.wire.card_replies import CARD_MEDIA_TYPE, CardClosed, CardReviewed, CardsReply, CardUpdate, card_payload
from tcccd.wire.messages import CardClose, CardGet, CardReview
from tcccd.wire.protocol import Message

NO_JOURNAL = "the casualty card lives in the transcript journal's file, and the journal is disabled " \
             "(transcripts.enabled: false)"


class CardRequests:
    def __init__(self, store: CardStore) -> None:
        self.store = store

    def answer(self, message: Message) -> Message:
        """The reply to one card request (its data already checked at the edge, tcccd.wire.messages)."""
        log = self.store.card_log()
        if log is None:
            return message.error("no_route", NO_JOURNAL)
        if message.type == "card.get":
            return self._get(message, log)
        if message.type == "card.close":
            return self._close(message, log)
        return self._review(message, log)

    def _get(self, message: Message, log: CardLog) -> Message:
        ask = CardGet.model_validate(message.data)
        current = self.store.mission.number
        mission = ask.mission or current
        if mission > current:
            return message.error("unknown_mission", f"mission {mission} has not begun; the current mission is "
                                                    f"{current} (leave mission out for its cards)")
        cards = self.store.projector.cards() if mission == current else \
            project(events_of(log.events(), log.missions(), mission), log.reviews())
        if ask.casualty is not None:
            picked = [card for card in cards.cards if card.casualty == ask.casualty]
            if not picked:
                known = ", ".join(str(card.casualty) for card in cards.cards) or "none yet"
                return message.error("unknown_casualty", f"no card for casualty {ask.casualty}; casualties with a "
                                                         f"card: {known} (leave casualty out for every card)")
            cards = CardSet(cards=picked)
        reply = CardsReply(casualties=[card.casualty for card in cards.cards], events=log.count(), mission=mission,
                           current_mission=current, media_type=CARD_MEDIA_TYPE)
        return message.reply(CardsReply.TYPE, reply.to_data(), final=True, payload=card_payload(cards))

    def _review(self, message: Message, log: CardLog) -> Message:
        ask = CardReview.model_validate(message.data)
        review = Review(event=ask.event, action="confirm" if message.type == "card.confirm" else "reject",
                        ts=time.time(), by=ask.by)
        if not self.store.projector.holds(review.event):
            return message.error("unknown_event", f"no card event {review.event!r} on the current mission's cards "
                                                  f"(mission {self.store.mission.number}; a closed mission's cards "
                                                  f"are kept as they were); event ids look like 'j12.3' (see the "
                                                  f"card's entries or `tcccd card --json`)")
        try:
            log.review(review)
        except UnknownEvent as exc:
            return message.error("unknown_event", str(exc))
        card = self.store.projector.review(review)
        if card is None:  # held, then not: cannot happen while both come from one log
            return message.error("unknown_event", f"event {ask.event!r} is in the log but on no card")
        update = CardUpdate(casualty=card.casualty, cause="review", changed=[review.event],
                            mission=self.store.mission.number, media_type=CARD_MEDIA_TYPE)
        self.store.publish_card(card.casualty, update)
        reply = CardReviewed(event=review.event, action=review.action, casualty=card.casualty, by=review.by,
                             ts=review.ts, media_type=CARD_MEDIA_TYPE)
        return message.reply(CardReviewed.TYPE, reply.to_data(), final=True,
                             payload=card_payload(CardSet(cards=[card])))

    def _close(self, message: Message, log: CardLog) -> Message:
        ask = CardClose.model_validate(message.data)
        closed, cards = self.store.close_mission(log, ask.by)
        reply = CardClosed(mission=closed.number, through_journal_seq=closed.through_journal_seq,
                           casualties=[card.casualty for card in cards.cards], by=closed.by, ts=closed.ts,
                           media_type=CARD_MEDIA_TYPE)
        return message.reply(CardClosed.TYPE, reply.to_data(), final=True, payload=card_payload(cards))
