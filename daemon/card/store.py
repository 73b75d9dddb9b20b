"""The casualty cards on the daemon's side: the log, the cards projected from it, the mission, the next casualty.

The card log lives in the transcript journal's SQLite file, so the store follows
the journal in use: when a reload opens another journal (or none), the log is
reopened there and the current mission's cards rebuilt from it (`generation`
counts the openings, so the keeper knows a request it had in flight belongs to
the old one). The store also keeps where extraction stands: the last journal
entry done (`cursor`), the casualty that entry left current (`casualty`) and
what else the stateless card stage left for the next transcript (`carry`: a
correction pending, the last entry said), all on disk in the same transaction as
the events. Every change to the cards is published on the `card` topic after it
is on disk.
"""

from __future__ import annotations

import time

import structlog

from tcccd.card.log import CardLog, Extracted
from tcccd.card.missions import Mission, MissionClock
from tcccd.card.projection import Projector
from tcccd.ports import JournalSource, Publisher
from tcccd.wire.card import CardSet
from tcccd.wire.card_events import Event
from tcccd.wire.card_replies import CARD_MEDIA_TYPE, CardUpdate, card_payload
from tcccd.wire.card_stage import Carry
from tcccd.wire.protocol import Message


class CardStore:
    def __init__(self, journal: JournalSource, events: Publisher) -> None:
        self.journal = journal
        self.events = events
        self.mission = MissionClock()
        self.projector = Projector()
        self.casualty, self.carry = 1, Carry()
        self.cursor = 0  # the last journal entry extracted (or skipped)
        self.generation = 0
        self._card_log: CardLog | None = None
        self._card_log_path: object = None
        self.log = structlog.get_logger()

    def card_log(self) -> CardLog | None:
        """The card log in the current journal's file: opened (and the cards rebuilt) when the journal changed."""
        journal = self.journal.journal()
        path = journal.path if journal is not None else None
        if self._card_log is not None and (path is None or self._card_log_path != path):
            self._card_log.close()
            self._card_log = None
        if path is not None and self._card_log is None:
            self._card_log, self._card_log_path = CardLog.open(path), path
            self.generation += 1
            self.projector = self.mission.rebuild(self._card_log)
            self.casualty = self._card_log.current_casualty(self.mission.after_journal_seq)
            self.cursor, self.carry = self._card_log.last_extracted(), self._card_log.last_carry()
            self.log.info("casualty cards rebuilt from the card log", cards=len(self.projector.cards().cards),
                          extracted_up_to=self.cursor)
        return self._card_log

    def last_journal_seq(self) -> int:
        journal = self.journal.journal()
        return journal.last_seq() if journal is not None else 0

    def context_before(self, journal_seq: int) -> tuple[int, Carry]:
        """The casualty current before this journal entry and what the previous one left: casualty one and
        nothing when it is the first of a new mission."""
        if self.mission.starts_at(self.cursor, journal_seq):
            return 1, Carry()
        return self.casualty, self.carry

    def record(self, log: CardLog, journal_seq: int, events: list[Event], casualty_after: int,
               carry: Carry) -> tuple[list[Event], list[Event]]:
        """The entry's events and its done mark, in one transaction; then folded into the cards and published.
        Returns the events newly stored, and those of them on the current mission's cards (a closed mission's
        late ones are logged, not shown). sqlite3.DatabaseError: nothing was written."""
        stored = log.append(events, Extracted(journal_seq, casualty_after, carry=carry))
        self.casualty, self.cursor, self.carry = casualty_after, journal_seq, carry
        shown = [event for event in stored if self.mission.holds(event)]
        changed: dict[int, list[str]] = {}
        for event in shown:
            self.projector.apply(event)
            changed.setdefault(event.casualty, []).append(event.id)
        for casualty, ids in changed.items():
            self.publish_card(casualty, CardUpdate(casualty=casualty, cause="events", changed=ids,
                                                   journal_seq=journal_seq, mission=self.mission.number,
                                                   media_type=CARD_MEDIA_TYPE))
        return stored, shown

    def skip(self, log: CardLog, journal_seq: int, reason: str) -> None:
        """The entry is marked done with no events (sqlite3.DatabaseError: not marked)."""
        log.append([], Extracted(journal_seq, self.casualty, f"skipped: {reason[:500]}", self.carry))
        self.cursor = journal_seq

    def close_mission(self, log: CardLog, by: str) -> tuple[Mission, CardSet]:
        """`card.close`: the boundary appended, the new mission's (empty) cards, casualty one next, the topic
        told. Returns the closed mission and its cards as they were handed over."""
        cards = self.projector.cards()
        closed = log.close_mission(self.last_journal_seq(), time.time(), by)
        self.projector = self.mission.rebuild(log)
        if self.cursor >= closed.through_journal_seq:  # else the closed mission's last words are on their way
            self.casualty, self.carry = 1, Carry()
        update = CardUpdate(casualty=1, cause="closed", changed=[], mission=self.mission.number,
                            media_type=CARD_MEDIA_TYPE)
        self.events.publish("card", Message(CardUpdate.TYPE, data=update.to_data(), payload=card_payload(CardSet())))
        return closed, cards

    def publish_card(self, casualty: int, update: CardUpdate) -> None:
        """The `card` topic: one casualty's card as it now is, after the change is on disk."""
        card = self.projector.card(casualty)
        if card is not None:
            payload = card_payload(CardSet(cards=[card]))
            self.events.publish("card", Message(CardUpdate.TYPE, data=update.to_data(), payload=payload))

    def close(self) -> None:
        if self._card_log is not None:
            self._card_log.close()
            self._card_log = None
