"""The card log: append-only, in the journal's file, durable before anyone is told, idempotent per event id."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tcccd.card.log import CardLog, Extracted, UnknownEvent
from tcccd.plugins.card.context_rules import ContextRules
from tcccd.plugins.card.extract import CardReader
from tcccd.record.journal import JournalSettings, TranscriptJournal
from tcccd.wire.card_events import Event, Review
from tcccd.wire.card_stage import CardExtract, Carry
from tests.support.card_scenarios import segment

REPO = Path(__file__).resolve().parents[2]
READER = CardReader(ContextRules.load())


def events_of(heard: str, journal_seq: int, casualty: int = 1) -> list[Event]:
    seg = segment(heard, [])
    return READER.extract(CardExtract(text=seg["text"], segments=[seg], journal_seq=journal_seq, request_id="r",
                                      source="mic", utterance_ts=1795511820.0, utc_offset_min=0,
                                      casualty=casualty)).events


def test_events_and_reviews_round_trip_in_the_journal_file(tmp_path: Path) -> None:
    journal = TranscriptJournal.open(tmp_path, JournalSettings())
    log = CardLog(journal.db)
    first = events_of("Tourniquet left leg at zero nine twelve. Pulse one ten.", journal_seq=1)
    assert log.append(first) == first
    log.review(Review(event=first[1].id, action="confirm", ts=2.0, by="medic"))
    assert log.events() == first and [r.event for r in log.reviews()] == [first[1].id]
    journal.close()
    reopened = CardLog.open(tmp_path / JournalSettings().file_name)
    assert reopened.events() == first
    assert reopened.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert reopened.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_the_same_transcript_appended_twice_is_stored_once(tmp_path: Path) -> None:
    log = CardLog.open(tmp_path / "t.sqlite3")
    events = events_of("Casualty two, pulse one ten.", journal_seq=4)
    assert len(log.append(events)) == 2
    assert log.append(events) == []
    assert len(log.events()) == 2 and log.current_casualty() == 2


def test_the_log_refuses_updates_and_deletes(tmp_path: Path) -> None:
    log = CardLog.open(tmp_path / "t.sqlite3")
    [event] = log.append(events_of("Pulse one ten.", journal_seq=1))
    log.review(Review(event=event.id, action="confirm", ts=1.0, by="medic"))
    for statement in ("UPDATE card_events SET casualty = 2", "DELETE FROM card_events",
                      "DELETE FROM card_reviews"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            log.db.execute(statement)
    assert len(log.events()) == 1 and len(log.reviews()) == 1


def test_a_review_of_an_unknown_event_is_refused_with_what_ids_look_like(tmp_path: Path) -> None:
    log = CardLog.open(tmp_path / "t.sqlite3")
    with pytest.raises(UnknownEvent, match="no card event 'j9.9'.*look like 'j12.3'"):
        log.review(Review(event="j9.9", action="reject", ts=1.0, by="tablet"))
    assert log.reviews() == []


def test_an_empty_log_starts_with_casualty_one(tmp_path: Path) -> None:
    assert CardLog.open(tmp_path / "t.sqlite3").current_casualty() == 1


def test_nothing_appended_is_lost_when_the_writer_is_killed(tmp_path: Path) -> None:
    """A writer prints each event id after append() returns (as the daemon will publish); SIGKILL it mid-stream."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tcccd.card.log import CardLog
        from tcccd.wire.card_events import Event
        template = Event.model_validate_json(sys.stdin.readline())
        log = CardLog.open(Path({str(tmp_path)!r}) / "transcripts.sqlite3")
        n = 0
        while True:
            n += 1
            event = template.model_copy(update={{"id": f"j{{n}}.0"}})
            log.append([event])
            print(event.id, flush=True)
    """)
    [template] = events_of("Pulse one ten.", journal_seq=1)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(template.model_dump_json() + "\n")
    proc.stdin.flush()
    published = [proc.stdout.readline().strip() for _ in range(30)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = {e.id for e in CardLog.open(tmp_path / "transcripts.sqlite3").events()}
    assert set(published) <= stored


def test_a_log_written_before_the_carry_was_kept_opens_and_keeps_the_carry_from_then_on(tmp_path: Path) -> None:
    path = tmp_path / "transcripts.sqlite3"
    old = sqlite3.connect(str(path))
    old.execute("CREATE TABLE card_extracted (journal_seq INTEGER PRIMARY KEY, casualty INTEGER NOT NULL, "
                "events INTEGER NOT NULL, outcome TEXT NOT NULL)")
    old.execute("INSERT INTO card_extracted VALUES (1, 2, 0, 'events')")
    old.commit()
    old.close()
    log = CardLog.open(path)
    assert log.last_extracted() == 1 and log.last_carry() == Carry()
    log.append([], Extracted(2, 2, carry=Carry(correcting=True)))
    assert log.last_carry().correcting
    log.close()
    assert CardLog.open(path).last_carry().correcting
