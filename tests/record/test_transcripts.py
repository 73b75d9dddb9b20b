"""The transcript journal: durable before publish, survives SIGKILL, retention, a full disk is loud."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tcccd.record.journal import Entry, JournalFull, JournalSettings, TranscriptJournal, confidence_of

REPO = Path(__file__).resolve().parents[2]


def entry(text: str, ts: float | None = None, source: str = "mic") -> Entry:
    segments = [{"start_s": 0.0, "end_s": 1.2, "text": text, "avg_logprob": -0.2}]
    return Entry(ts=time.time() if ts is None else ts, source=source, profile="field", request_id="r1", text=text,
                 confidence=confidence_of(segments), segments=segments)


def test_append_then_since_returns_what_was_written(tmp_path: Path) -> None:
    journal = TranscriptJournal.open(tmp_path, JournalSettings())
    first = journal.append(entry("tourniquet at zero nine fifteen", ts=100.0))
    second = journal.append(entry("TXA given", ts=200.0, source="client"))
    assert second > first
    assert [e.text for e in journal.since(0.0)] == ["tourniquet at zero nine fifteen", "TXA given"]
    [late] = journal.since(150.0)
    assert late.source == "client" and late.seq == second and late.segments[0]["text"] == "TXA given"
    assert [e.text for e in journal.since(after_seq=first)] == ["TXA given"]
    assert late.confidence == pytest.approx(0.8187, abs=1e-3)
    assert journal.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert journal.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_nothing_appended_is_lost_when_the_writer_is_killed(tmp_path: Path) -> None:
    """A writer prints each sequence number after append() returns (as the daemon publishes); SIGKILL it."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tcccd.record.journal import Entry, JournalSettings, TranscriptJournal
        journal = TranscriptJournal.open(Path({str(tmp_path)!r}), JournalSettings())
        n = 0
        while True:
            n += 1
            seq = journal.append(Entry(time.time(), "mic", "field", "r", f"utterance {{n}}", None, []))
            print(seq, flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    published = []
    assert proc.stdout is not None
    while len(published) < 40:
        published.append(int(proc.stdout.readline()))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    published += [int(line) for line in proc.stdout.read().split()]
    journal = TranscriptJournal.open(tmp_path, JournalSettings())
    kept = {e.seq for e in journal.since(0.0)}
    assert set(published) <= kept


def test_retention_by_age_and_size(tmp_path: Path) -> None:
    journal = TranscriptJournal.open(tmp_path, JournalSettings(max_age_days=1.0, max_bytes=64 * 1024))
    now = time.time()
    journal.append(entry("old", ts=now - 3 * 86400))
    journal.append(entry("new", ts=now))
    journal.prune(now)
    assert [e.text for e in journal.since(0.0)] == ["new"]
    for i in range(600):
        journal.append(entry(f"utterance {i} " + "x" * 200, ts=now))
    journal.prune(now)
    texts = [e.text for e in journal.since(0.0)]
    assert journal.transcripts_bytes() <= 64 * 1024
    assert texts and texts[-1].startswith("utterance 599") and len(texts) < 600  # the oldest went first


def test_full_disk_is_an_error_with_the_reason_not_a_silent_drop(tmp_path: Path) -> None:
    journal = TranscriptJournal.open(tmp_path, JournalSettings())
    pages = journal.db.execute("PRAGMA page_count").fetchone()[0]
    journal.db.execute(f"PRAGMA max_page_count={pages}")  # SQLite's own limit: it answers as a full disk does
    with pytest.raises(JournalFull, match="full"):
        for i in range(200):
            journal.append(entry(f"utterance {i} " + "x" * 500))
    health = journal.health()
    assert health["state"] == "failing" and health["failures"] == 1 and "full" in health["last_error"]


def test_settings_refuse_a_path_as_file_name() -> None:
    with pytest.raises(ValueError, match="file_name"):
        JournalSettings(file_name="../../etc/passwd")


def test_feed_journals_before_publishing_and_a_full_disk_is_loud_but_still_published(tmp_path: Path) -> None:
    from tcccd.core.health import Alerts, RecentErrors
    from tcccd.record.feed import JournalSlot, TranscriptFeed
    from tcccd.wire.protocol import Message

    journal = TranscriptJournal.open(tmp_path, JournalSettings())
    published, heard = [], []
    recent = RecentErrors()

    class Events:  # the events socket: what a subscriber would receive, with what the journal held by then
        def publish(self, topic: str, message: Message) -> None:
            published.append((topic, message, [e.text for e in journal.since(0.0)]))

    class Field:  # the running profile
        def name(self) -> str:
            return "field"

    class Listener:  # the card keeper's place: told after journal and publish
        def heard(self, source: str, partial: bool, journal_seq: int | None) -> None:
            heard.append((source, partial, journal_seq, len(published)))

    events = Events()
    feed = TranscriptFeed(JournalSlot(journal), events, Field(), Alerts(events, recent), [Listener()])
    reply = feed.final(Message("transcript", id="r1", data={"text": "TXA given", "start_s": 0.0, "end_s": 1.0}), "mic")
    [(topic, event, seen)] = published
    assert topic == "transcript" and seen == ["TXA given"]  # on disk before anyone heard of it
    assert event.data["source"] == "mic" and event.data["journal_seq"] == reply.data["journal_seq"] == 1
    assert heard == [("mic", False, 1, 1)]  # the listener hears of it after it is journalled and published

    journal.db.execute(f"PRAGMA max_page_count={journal.db.execute('PRAGMA page_count').fetchone()[0]}")
    for i in range(100):
        feed.final(Message("transcript", id=f"r{i + 2}", data={"text": "x" * 2000}), "client")
        if recent.entries:
            break
    alerts = [m for t, m, _ in published if t == "alert"]
    assert alerts and alerts[0].data["kind"] == "journal_full" and "NOT RECORDED" in recent.entries[0]["message"]
    assert published[-1][0] == "transcript" and "journal_seq" not in published[-1][1].data  # still published


def test_retention_keeps_what_the_card_has_not_read_and_the_card_log_is_not_counted(tmp_path: Path) -> None:
    """The journal's size pruning counted the card tables and deleted transcripts the card had not extracted."""
    from tcccd.card.log import CardLog, Extracted

    journal = TranscriptJournal.open(tmp_path, JournalSettings(max_age_days=1.0, max_bytes=64 * 1024))
    card = CardLog.open(journal.path)
    now = time.time()
    seqs = [journal.append(entry(f"utterance {i} " + "x" * 200, ts=now - 3 * 86400)) for i in range(400)]
    card.append([], Extracted(seqs[99], 1))  # the card has read the first hundred
    journal.prune(now)
    kept = [e.seq for e in journal.since(0.0)]
    assert kept == seqs[100:]  # old by age, but unread: kept
    assert journal.held_for_card == 300 and journal.health()["held_for_card"] == 300
    card.append([], Extracted(seqs[-1], 1))
    journal.prune(now)
    assert journal.since(0.0) == [] and journal.held_for_card == 0

    big = "c" * 1000  # the card's own tables grow past the whole budget: no transcript goes for them
    with card.db:
        card.db.execute("CREATE TABLE card_notes_filler (x TEXT)")
        card.db.executemany("INSERT INTO card_notes_filler VALUES (?)", [(big,) for _ in range(300)])
    fresh = [journal.append(entry(f"new {i}", ts=now)) for i in range(20)]
    card.append([], Extracted(fresh[-1], 1))
    journal.prune(now)
    assert journal.size_bytes() > 64 * 1024 and [e.seq for e in journal.since(0.0)] == fresh
