"""The casualty card's event log: append-only tables in the transcript journal's SQLite file.

Every event the card stage finds, and every review of one (confirm, reject), is
appended here before anyone is told of it, with the journal's durability (WAL,
synchronous=FULL: a commit returns after fsync, so it survives kill -9 and power
loss). Nothing is ever updated or deleted: triggers refuse it, and a review is a
new row, not a change. The card is a projection of this log
(tcccd.card.projection); rebuilding it from the log gives the same card.
The events of one transcript are written in one transaction, and an event id is
stored once: handing the same transcript's events in twice (a retry, a replay
after a crash) appends nothing the second time. Which journal entries have been
through the card stage is written in the same transaction (`card_extracted`, with
what the stage carries to the next transcript), so after kill -9 the daemon knows
which transcripts still need their events, and what the next one is sent with.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from tcccd.card.missions import Mission
from tcccd.wire.card_events import Event, Review
from tcccd.wire.card_stage import Carry

SCHEMA = """
CREATE TABLE IF NOT EXISTS card_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    casualty INTEGER NOT NULL,
    kind TEXT NOT NULL,
    journal_seq INTEGER,
    logged_ts REAL NOT NULL,
    event TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS card_reviews (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL REFERENCES card_events(id),
    action TEXT NOT NULL CHECK (action IN ('confirm', 'reject')),
    ts REAL NOT NULL,
    by TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS card_extracted (
    journal_seq INTEGER PRIMARY KEY,
    casualty INTEGER NOT NULL,
    events INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    carry TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS card_missions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    through_journal_seq INTEGER NOT NULL,
    ts REAL NOT NULL,
    by TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS card_events_casualty ON card_events(casualty);
"""
APPEND_ONLY = """
CREATE TRIGGER IF NOT EXISTS {table}_no_update BEFORE UPDATE ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only: add a review instead of changing an event'); END;
CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only: add a review instead of deleting an event'); END;
"""


@dataclass(frozen=True)
class Extracted:
    """A journal entry the card stage has read: the casualty current after it, and how it went (`events`, or
    why it was skipped)."""

    journal_seq: int
    casualty: int
    outcome: str = "events"
    carry: Carry = field(default_factory=Carry)  # what the card stage left for the next transcript


class UnknownEvent(LookupError):
    """A review named an event id the log does not hold."""


class CardLog:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(card_extracted)")}
        if columns and "carry" not in columns:  # a log written before the carry was kept: its rows carried nothing
            self.db.execute("ALTER TABLE card_extracted ADD COLUMN carry TEXT NOT NULL DEFAULT '{}'")
        self.db.executescript(SCHEMA + APPEND_ONLY.format(table="card_events")
                              + APPEND_ONLY.format(table="card_reviews")
                              + APPEND_ONLY.format(table="card_extracted")
                              + APPEND_ONLY.format(table="card_missions"))

    @classmethod
    def open(cls, path: Path) -> CardLog:
        """The log in the journal's file (its own connection, the journal's durability settings)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=10.0)
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # as the journal does, in case the card log creates the file
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return cls(db)

    def append(self, events: list[Event], extracted: Extracted | None = None) -> list[Event]:
        """Write the events of one transcript in one transaction; those newly stored (an id already in the log is
        not stored again). `extracted` marks its journal entry done in the same transaction. Returns once they are
        on disk."""
        stored = []
        with self._transaction():
            if extracted is not None:
                self.db.execute("INSERT OR IGNORE INTO card_extracted (journal_seq, casualty, events, outcome, carry) "
                                "VALUES (?, ?, ?, ?, ?)", (extracted.journal_seq, extracted.casualty, len(events),
                                                           extracted.outcome, extracted.carry.model_dump_json()))
            for event in events:
                cursor = self.db.execute(
                    "INSERT OR IGNORE INTO card_events (id, casualty, kind, journal_seq, logged_ts, event) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (event.id, event.casualty, event.kind, event.transcript.journal_seq, event.time.logged_ts,
                     event.model_dump_json()))
                if cursor.rowcount:
                    stored.append(event)
        return stored

    def review(self, review: Review) -> Review:
        """Append a confirm or reject of an event; raises UnknownEvent when the log has no such event."""
        with self._transaction():
            if self.db.execute("SELECT 1 FROM card_events WHERE id = ?", (review.event,)).fetchone() is None:
                raise UnknownEvent(f"no card event {review.event!r} in the log; event ids look like 'j12.3' "
                                   f"(see the card's entries or `tcccd card --json`)")
            self.db.execute("INSERT INTO card_reviews (event_id, action, ts, by) VALUES (?, ?, ?, ?)",
                            (review.event, review.action, review.ts, review.by))
        return review

    def events(self, after_seq: int = 0) -> list[Event]:
        """Every event after a log position, in the order appended."""
        rows = self.db.execute("SELECT event FROM card_events WHERE seq > ? ORDER BY seq", (after_seq,)).fetchall()
        return [Event.model_validate_json(r[0]) for r in rows]

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM card_events").fetchone()[0])

    def reviews(self) -> list[Review]:
        rows = self.db.execute("SELECT event_id, action, ts, by FROM card_reviews ORDER BY seq").fetchall()
        return [Review(event=r[0], action=r[1], ts=r[2], by=r[3]) for r in rows]

    def close_mission(self, through_journal_seq: int, ts: float, by: str) -> Mission:
        """Append a mission boundary: the journal entries up to `through_journal_seq` are the closed mission's."""
        with self._transaction():
            self.db.execute("INSERT INTO card_missions (through_journal_seq, ts, by) VALUES (?, ?, ?)",
                            (through_journal_seq, ts, by))
        return self.missions()[-1]

    def missions(self) -> list[Mission]:
        """The closed missions, oldest first (number 1 is the first)."""
        rows = self.db.execute("SELECT through_journal_seq, ts, by FROM card_missions ORDER BY seq").fetchall()
        return [Mission(number, r[0], r[1], r[2]) for number, r in enumerate(rows, start=1)]

    def last_extracted(self) -> int:
        """The last journal entry marked extracted (0: none): the entries after it still need the card stage."""
        row = self.db.execute("SELECT MAX(journal_seq) FROM card_extracted").fetchone()
        return int(row[0] or 0)

    def last_carry(self) -> Carry:
        """What the last transcript extracted left for the next (a pending correction, its last entry)."""
        row = self.db.execute("SELECT carry FROM card_extracted ORDER BY journal_seq DESC LIMIT 1").fetchone()
        return Carry.model_validate_json(row[0]) if row else Carry()

    def current_casualty(self, after_journal_seq: int = 0) -> int:
        """The casualty of the last event appended from a transcript after `after_journal_seq` (a switch is an event
        of the casualty switched to); 1 when there is none: what the medic says before naming anyone, in a mission,
        belongs to casualty one."""
        row = self.db.execute("SELECT casualty FROM card_events WHERE journal_seq > ? ORDER BY seq DESC LIMIT 1",
                              (after_journal_seq,)).fetchone()
        return int(row[0]) if row else 1

    def _transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def close(self) -> None:
        self.db.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error): all of one append is on disk, or none of it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
