"""Missions: where one mission's casualty cards end and the next one's begin.

The journal and the card log know no missions: "casualty one" of today's
mission would otherwise add to yesterday's card 1. `card.close` appends a
boundary to the card log (`card_missions`, append-only like the rest): the
newest journal entry at that moment. A mission's cards are the events of the
transcripts journalled after the previous boundary and up to its own, so a
transcript already said but still on its way through the card stage when the
mission closed is filed under the mission it was said in. Missions count from
1; the one after the last boundary is the current one. Closed missions stay in
the log, exportable (`card.get` with `mission`), never changed.

`MissionClock` is the keeper's view of the mission under way: its number, where
it starts in the journal, its cards rebuilt from the log, whether an event
belongs to the cards on show (a transcript said before the close and extracted
after it belongs to the closed mission: logged, not shown), and whether a journal
entry is the first of a new mission (the card stage then starts it at casualty one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tcccd.card.projection import Projector
from tcccd.wire.card_events import Event

if TYPE_CHECKING:
    from tcccd.card.log import CardLog


@dataclass(frozen=True)
class Mission:
    """A closed mission: its number, the last journal entry it holds, when and by whom it was closed."""

    number: int
    through_journal_seq: int
    ts: float
    by: str


def current_number(closed: list[Mission]) -> int:
    return len(closed) + 1


def journal_range(closed: list[Mission], number: int) -> tuple[int, float]:
    """(after, through]: the journal entries whose events belong to mission `number` (1..current)."""
    after = closed[number - 2].through_journal_seq if number > 1 else 0
    through = closed[number - 1].through_journal_seq if number <= len(closed) else float("inf")
    return after, through


def events_of(events: list[Event], closed: list[Mission], number: int) -> list[Event]:
    """The events of one mission, in log order."""
    after, through = journal_range(closed, number)
    return [e for e in events if after < (e.transcript.journal_seq or 0) <= through]


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
