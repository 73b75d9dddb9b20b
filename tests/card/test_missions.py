"""Missions in the card log: a boundary appended by card.close; each mission's cards are its own transcripts'."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tcccd.card.log import CardLog
from tcccd.card.missions import MissionClock
from tcccd.card.missions import events_of as mission_events
from tests.card.test_log import events_of


def fields(events) -> list[tuple[int, str]]:
    return [(e.casualty, e.kind) for e in events]


def test_a_mission_holds_the_transcripts_said_before_its_close_even_when_extracted_after(tmp_path: Path) -> None:
    log = CardLog.open(tmp_path / "t.sqlite3")
    log.append(events_of("Casualty two. Tourniquet left leg at zero nine twelve.", journal_seq=1))
    closed = log.close_mission(through_journal_seq=2, ts=10.0, by="medic")  # entry 2 said, not yet extracted
    assert (closed.number, closed.through_journal_seq, closed.by) == (1, 2, "medic")
    late = log.append(events_of("Pulse one ten.", journal_seq=2, casualty=2))
    new = log.append(events_of("Burns to the chest.", journal_seq=3))
    clock = MissionClock()
    cards = clock.rebuild(log).cards().cards
    assert clock.number == 2 and [c.casualty for c in cards] == [1]
    assert not clock.holds(late[0]) and clock.holds(new[0])
    assert log.current_casualty(clock.after_journal_seq) == 1 and log.current_casualty() == 1
    first = mission_events(log.events(), log.missions(), 1)
    assert [e.transcript.journal_seq for e in first] == [1, 1, 2] and fields(first)[-1] == (2, "pulse")
    assert [e.transcript.journal_seq for e in mission_events(log.events(), log.missions(), 2)] == [3]


def test_the_first_entry_after_a_boundary_starts_the_mission(tmp_path: Path) -> None:
    log = CardLog.open(tmp_path / "t.sqlite3")
    log.close_mission(through_journal_seq=5, ts=1.0, by="tablet-2")
    clock = MissionClock()
    clock.rebuild(log)
    assert clock.starts_at(cursor=4, journal_seq=6) and clock.starts_at(cursor=5, journal_seq=6)
    assert not clock.starts_at(cursor=3, journal_seq=4) and not clock.starts_at(cursor=6, journal_seq=7)


def test_boundaries_are_append_only(tmp_path: Path) -> None:
    log = CardLog.open(tmp_path / "t.sqlite3")
    log.close_mission(through_journal_seq=1, ts=1.0, by="medic")
    for statement in ("UPDATE card_missions SET through_journal_seq = 9", "DELETE FROM card_missions"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            log.db.execute(statement)
    assert [m.through_journal_seq for m in CardLog.open(tmp_path / "t.sqlite3").missions()] == [1]
