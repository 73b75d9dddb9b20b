"""The transcript journal: every final transcript, on disk before anyone is told of it.

The journal is the medic's record. A transcript is appended (SQLite, WAL,
synchronous=FULL: the commit returns only after fsync) before it is published,
so whatever a subscriber saw survives kill -9 and power loss, and a subscriber
that reconnects asks `since` for what it missed. Retention by age and size
keeps a long mission from filling the disk; a disk that is full anyway is
reported loudly (status, log, alert) and the transcript is still published:
the record has a gap the operator knows about, never a silent one.

The casualty card's log shares the file (tcccd.card.log). Retention never
deletes a transcript the card has not read yet (after the last entry in
`card_extracted`): those wait for the card stage, and health counts them when
they keep the journal over its budget. The size budget bounds the transcripts
alone (their table and index, measured with SQLite's dbstat); the card's tables
are the mission's record and do not count against it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA = """
CREATE TABLE IF NOT EXISTS transcripts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    source TEXT NOT NULL,
    profile TEXT NOT NULL,
    request_id TEXT NOT NULL,
    text TEXT NOT NULL,
    confidence REAL,
    segments TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS transcripts_ts ON transcripts(ts);
"""
PRUNE_EVERY_APPENDS = 64
SINCE_MAX_ROWS = 10000


class JournalSettings(BaseModel):
    """`transcripts:` in the config: where the record lives and how much of it is kept."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    file_name: str = Field("transcripts.sqlite3", pattern=r"^[A-Za-z0-9_.-]+$",
                           description="inside daemon.state_dir")
    max_age_days: float = Field(30.0, gt=0, description="older transcripts are deleted")
    max_bytes: int = Field(256 * 1024 * 1024, ge=64 * 1024, description="oldest transcripts go first when they take "
                           "more than this (the casualty card's tables in the same file do not count)")


class JournalFull(Exception):
    """The transcript could not be written: the disk (or the journal's size limit) has no room."""


@dataclass
class Entry:
    ts: float
    source: str
    profile: str
    request_id: str
    text: str
    confidence: float | None
    segments: list[dict[str, Any]]
    seq: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "ts": self.ts, "source": self.source, "profile": self.profile,
                "request_id": self.request_id, "text": self.text, "confidence": self.confidence,
                "segments": self.segments}


def confidence_of(segments: list[dict[str, Any]]) -> float | None:
    """Mean token probability over the segments (exp of avg_logprob), None when there is nothing to rate."""
    import math

    logprobs = [s["avg_logprob"] for s in segments if isinstance(s.get("avg_logprob"), (int, float))]
    if not logprobs:
        return None
    return round(math.exp(sum(logprobs) / len(logprobs)), 4)


class TranscriptJournal:
    def __init__(self, path: Path, settings: JournalSettings) -> None:
        self.path = path
        self.settings = settings
        self.appends = 0
        self.failures = 0
        self.held_for_card = 0  # transcripts over the size budget kept because the card has not read them
        self.last_error: str | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # only takes effect on a new file: it must come first
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self.prune()

    @classmethod
    def open(cls, state_dir: Path, settings: JournalSettings) -> TranscriptJournal:
        return cls(state_dir / settings.file_name, settings)

    def append(self, entry: Entry) -> int:
        """Write one transcript durably; its journal sequence number. Raises JournalFull when there is no room."""
        try:
            cursor = self.db.execute(
                "INSERT INTO transcripts (ts, source, profile, request_id, text, confidence, segments) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (entry.ts, entry.source, entry.profile, entry.request_id, entry.text, entry.confidence,
                 json.dumps(entry.segments, separators=(",", ":"))))
        except sqlite3.DatabaseError as exc:
            self.failures += 1
            self.last_error = f"transcript not written to {self.path}: {exc}"
            raise JournalFull(self.last_error) from None
        self.appends += 1
        self.last_error = None
        if self.appends % PRUNE_EVERY_APPENDS == 0:
            self.prune()
        return int(cursor.lastrowid or 0)

    def since(self, since_ts: float = 0.0, after_seq: int = 0, limit: int = SINCE_MAX_ROWS) -> list[Entry]:
        """Transcripts newer than a time and a sequence number, oldest first."""
        rows = self.db.execute(
            "SELECT seq, ts, source, profile, request_id, text, confidence, segments FROM transcripts "
            "WHERE ts >= ? AND seq > ? ORDER BY seq LIMIT ?", (since_ts, after_seq, limit)).fetchall()
        return [Entry(seq=r[0], ts=r[1], source=r[2], profile=r[3], request_id=r[4], text=r[5], confidence=r[6],
                      segments=json.loads(r[7])) for r in rows]

    def last_seq(self) -> int:
        """The newest entry's journal_seq (0 when empty)."""
        return int(self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM transcripts").fetchone()[0])

    def size_bytes(self) -> int:
        """Bytes in use in the file (pages minus the free list), the card's tables included."""
        page_count = self.db.execute("PRAGMA page_count").fetchone()[0]
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        page_size = self.db.execute("PRAGMA page_size").fetchone()[0]
        return (page_count - free) * page_size

    def transcripts_bytes(self) -> int:
        """Bytes the transcripts take (their table and index): what max_bytes bounds. Without SQLite's dbstat, the
        file's size in use, which over-counts (never under)."""
        try:
            row = self.db.execute("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat "
                                  "WHERE name IN ('transcripts', 'transcripts_ts')").fetchone()
        except sqlite3.OperationalError:
            return self.size_bytes()
        return int(row[0])

    def unread_from(self) -> int | None:
        """The first journal entry the casualty card has not read (None: no card log in this file)."""
        try:
            row = self.db.execute("SELECT MAX(journal_seq) FROM card_extracted").fetchone()
        except sqlite3.OperationalError:
            return None
        return int(row[0] or 0) + 1

    def prune(self, now: float | None = None) -> int:
        """Delete by age, then oldest first until the transcripts are under max_bytes, never one the card has not
        read; returns rows deleted."""
        now = time.time() if now is None else now
        deleted, self.held_for_card = 0, 0
        try:
            keep = self.unread_from() or (1 << 62)
            deleted += self.db.execute("DELETE FROM transcripts WHERE ts < ? AND seq < ?",
                                       (now - self.settings.max_age_days * 86400, keep)).rowcount
            while self.transcripts_bytes() > self.settings.max_bytes:
                count = self.db.execute("SELECT COUNT(*) FROM transcripts WHERE seq < ?", (keep,)).fetchone()[0]
                if count == 0:
                    self.held_for_card = self.db.execute("SELECT COUNT(*) FROM transcripts").fetchone()[0]
                    break
                deleted += self.db.execute(
                    "DELETE FROM transcripts WHERE seq IN (SELECT seq FROM transcripts WHERE seq < ? ORDER BY seq "
                    "LIMIT ?)", (keep, max(1, count // 10))).rowcount
            self.db.execute("PRAGMA incremental_vacuum")
        except sqlite3.DatabaseError as exc:
            self.last_error = f"journal retention failed: {exc}"
        return deleted

    def health(self) -> dict[str, Any]:
        return {"path": str(self.path), "state": "failing" if self.last_error else "ok", "appends": self.appends,
                "failures": self.failures, "last_error": self.last_error, "size_bytes": self.size_bytes(),
                "held_for_card": self.held_for_card}

    def close(self) -> None:
        self.db.close()
