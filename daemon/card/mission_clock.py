"""The mission the keeper files the card under: its number, where it starts in the journal, its cards rebuilt.

A mission starts after the last boundary `card.close` appended (tcccd.record.
card_missions). The keeper asks here whether an event belongs to the cards on
show (a transcript said before the close and extracted after it belongs to the
closed mission: logged, not shown), and whether a journal entry is the first of
a new mission (the card stage then starts it at casualty one).
"""

from __future__ import annotations

from tcccd.card.log import CardLog
from tcccd.card.missions import current_number, events_of
from tcccd.card.projection import Projector
from tcccd.wire.card_events import Event


class MissionClock:
    def __init__(self) -> None:
        self.number = 1
        self.after_journal_seq = 0  # the current mission's transcripts are the journal entries after this one

    def rebuild(self, log: CardLog) -> Projector:
        """The current mission's cards from the log (its events in log order, every review)."""
        closed = log.missions()
        self.number = current_number(closed)
        self.after_journal_seq = closed[-1].through_journal_seq if closed else 0
        projector = Projector(log.reviews())
        for event in events_of(log.events(), closed, self.number):
            projector.apply(event)
        return projector

    def holds(self, event: Event) -> bool:
        """The event is on the current mission's cards (not a late one of a closed mission)."""
        return (event.transcript.journal_seq or 0) > self.after_journal_seq

    def starts_at(self, cursor: int, journal_seq: int) -> bool:
        """The journal entry after `cursor` is the first of the current mission."""
        return cursor <= self.after_journal_seq < journal_seq
