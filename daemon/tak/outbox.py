"""What was sent to the TAK network, when and to whom: append-only tables beside the card log.

A CASEVAC the medic confirmed is appended here (`tak_sends`: the CoT event, the
request's uid, mission and casualties, who asked, by voice or request, where it
goes) before anything is sent, with the journal's durability (WAL,
synchronous=FULL); once the link has written it to the server or the mesh,
`tak_sent` gets a row. A send with no `tak_sent` row is pending: the link takes
it again after a restart or while the server is down, so a confirmed request is
never lost. Triggers refuse UPDATE and DELETE, as in the card log. A crash
between the write to the server and the `tak_sent` row sends it once more after
the restart: the same uid, so the map updates the marker it already has.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tcccd.card.log import APPEND_ONLY  # the card log's triggers: the send log lives in the same file, same rules

SCHEMA = """
CREATE TABLE IF NOT EXISTS tak_sends (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL,
    mission INTEGER NOT NULL,
    casualties TEXT NOT NULL,
    destination TEXT NOT NULL,
    requested_ts REAL NOT NULL,
    by TEXT NOT NULL,
    via TEXT NOT NULL CHECK (via IN ('voice', 'request')),
    withheld INTEGER NOT NULL,
    summary TEXT NOT NULL,
    cot BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS tak_sent (
    send_seq INTEGER PRIMARY KEY REFERENCES tak_sends(seq),
    ts REAL NOT NULL,
    destination TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class Send:
    seq: int
    uid: str
    mission: int
    casualties: tuple[int, ...]
    destination: str
    requested_ts: float
    by: str
    via: str
    withheld: int
    summary: str
    cot: bytes
    sent_ts: float | None = None


class Outbox:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.db.executescript(SCHEMA + APPEND_ONLY.format(table="tak_sends") + APPEND_ONLY.format(table="tak_sent"))

    @classmethod
    def open(cls, path: Path) -> Outbox:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=10.0)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return cls(db)

    def append(self, send: Send) -> Send:
        """On disk before it returns; the send with its log position."""
        cursor = self.db.execute(
            "INSERT INTO tak_sends (uid, mission, casualties, destination, requested_ts, by, via, withheld, summary, "
            "cot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (send.uid, send.mission, ",".join(map(str, send.casualties)), send.destination, send.requested_ts,
             send.by, send.via, send.withheld, send.summary, send.cot))
        return Send(**{**send.__dict__, "seq": int(cursor.lastrowid or 0)})

    def mark_sent(self, seq: int, ts: float, destination: str) -> bool:
        """True when this marks it; False when it was already marked (a second write of the same send)."""
        cursor = self.db.execute("INSERT OR IGNORE INTO tak_sent (send_seq, ts, destination) VALUES (?, ?, ?)",
                                 (seq, ts, destination))
        return bool(cursor.rowcount)

    def sends(self, mission: int | None = None) -> list[Send]:
        """Every send (of one mission), oldest first, with when it left (None: pending)."""
        rows = self.db.execute(
            "SELECT s.seq, s.uid, s.mission, s.casualties, s.destination, s.requested_ts, s.by, s.via, s.withheld, "
            "s.summary, s.cot, t.ts FROM tak_sends s LEFT JOIN tak_sent t ON t.send_seq = s.seq "
            "WHERE ? IS NULL OR s.mission = ? ORDER BY s.seq", (mission, mission)).fetchall()
        return [Send(r[0], r[1], r[2], tuple(int(c) for c in r[3].split(",") if c), r[4], r[5], r[6], r[7], r[8],
                     r[9], bytes(r[10]), r[11]) for r in rows]

    def pending(self) -> list[Send]:
        return [s for s in self.sends() if s.sent_ts is None]

    def close(self) -> None:
        self.db.close()
