"""The card is a projection of the log: rebuilt from it, it is the card the daemon kept up to date; reviews and
corrections land as the medic meant them."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tcccd.card.log import CardLog
from tcccd.card.projection import Projector, project
from tcccd.plugins.card.context_rules import ContextRules
from tcccd.plugins.card.extract import CardReader
from tcccd.wire.card import CardSet
from tcccd.wire.card_events import Event, Review
from tcccd.wire.card_stage import CardExtract
from tests.plugins.card.test_properties import CLINICAL
from tests.support.card_scenarios import segment

SPOKEN = [*CLINICAL, "Correction, pulse one ten.", "Correction, ketamine fifty milligrams IM.", "Casualty two.",
          "Back to casualty one.", "Next patient.", "Pulse seven hundred.", "Evac category routine.",
          "Pulse one twenty, BP one ten over seventy.", "Handover: CAT left leg, one gram of TXA IV.",
          "For the bird, second gram of TXA IV."]


READER = CardReader(ContextRules.load())


class Medic:
    """Utterances through the card stage into a log, with a Projector kept current as the daemon will."""

    def __init__(self, path: Path) -> None:
        self.log = CardLog.open(path)
        self.projector = Projector()
        self.casualty = 1
        self.seq = 0

    def says(self, heard: str, clock_s: float = 1795511820.0) -> list[Event]:
        self.seq += 1
        seg = segment(heard, [])
        result = READER.extract(CardExtract(text=seg["text"], segments=[seg], journal_seq=self.seq, request_id="r",
                                            source="mic", utterance_ts=clock_s, utc_offset_min=0,
                                            casualty=self.casualty))
        self.casualty = result.casualty
        stored = self.log.append(result.events)
        for event in stored:
            self.projector.apply(event)
        return stored

    def reviews(self, event_id: str, action: str) -> None:
        self.projector.review(self.log.review(Review(event=event_id, action=action, ts=1.0, by="medic")))

    def rebuilt(self) -> CardSet:
        return project(self.log.events(), self.log.reviews())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SPOKEN), st.integers(0, 40), st.sampled_from(["", "confirm", "reject"])),
                min_size=1, max_size=12))
def test_replaying_the_log_gives_the_same_card(script: list[tuple[str, int, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        medic = Medic(Path(tmp) / "transcripts.sqlite3")
        for minute, (heard, pick, action) in enumerate(script):
            medic.says(heard, 1795511820.0 + 60 * minute)
            events = medic.log.events()
            if action and events:
                medic.reviews(events[pick % len(events)].id, action)
        assert medic.rebuilt() == medic.projector.cards()
        reopened = CardLog.open(Path(tmp) / "transcripts.sqlite3")
        assert project(reopened.events(), reopened.reviews()) == medic.projector.cards()


def test_a_correction_replaces_the_latest_value_of_its_kind_and_names_it(tmp_path: Path) -> None:
    medic = Medic(tmp_path / "t.sqlite3")
    [old] = medic.says("Ketamine twenty milligrams IV.")
    medic.says("One gram of TXA IV.")
    [new] = medic.says("Correction, ketamine fifty milligrams IM.")
    [card] = medic.projector.cards().cards
    assert [(e.event.what.name, e.event.what.dose) for e in card.f_medications.medications] == [
        ("TXA", 1), ("ketamine", 50)]
    assert card.f_medications.medications[1].replaces == [old.id] and new.correction


def test_rejecting_a_correction_brings_back_what_it_replaced(tmp_path: Path) -> None:
    medic = Medic(tmp_path / "t.sqlite3")
    [first, second] = medic.says("Pulse one thirty. Correction, pulse one ten.")
    column = medic.projector.card(1).c_vitals[0]
    assert column.pulse.event.id == second.id and column.pulse.replaces == [first.id]
    medic.reviews(second.id, "reject")
    card = medic.projector.card(1)
    assert card.c_vitals[0].pulse.event.id == first.id and card.rejected == [second.id]
    assert medic.rebuilt() == medic.projector.cards()


def test_review_status_and_flags_show_on_the_card(tmp_path: Path) -> None:
    medic = Medic(tmp_path / "t.sqlite3")
    [wild] = medic.says("Pulse seven hundred.")
    assert medic.projector.card(1).c_vitals[0].pulse.status == "unconfirmed"
    medic.reviews(wild.id, "confirm")
    assert medic.projector.card(1).c_vitals[0].pulse.status == "confirmed"
    [plain] = medic.says("Respiratory rate twenty.", clock_s=1795512000.0)
    assert medic.projector.card(1).c_vitals[1].rr.event.id == plain.id
    assert medic.projector.card(1).c_vitals[1].rr.status == "recorded"


def test_negations_are_notes_and_repeats_do_not_double(tmp_path: Path) -> None:
    medic = Medic(tmp_path / "t.sqlite3")
    medic.says("No tourniquet needed. Gunshot wound to the left thigh.")
    medic.says("GSW left thigh.")
    card = medic.projector.card(1)
    assert [e.event.words.text for e in card.g_notes] == ["No tourniquet needed"]
    assert card.b_injury.tourniquets == []
    assert [(e.event.what.region, len(e.replaces)) for e in card.b_injury.injuries] == [("left thigh", 1)]
    assert [e.event.what.mechanism for e in card.b_injury.mechanisms] == ["GSW"]


def test_a_handover_says_again_what_the_card_holds_and_adds_only_what_is_new(tmp_path: Path) -> None:
    medic = Medic(tmp_path / "t.sqlite3")
    [tourniquet] = medic.says("TQ's on, left arm.", clock_s=1795511820.0)  # 06:37 on the kit's clock
    [txa] = medic.says("TXA one gram IV at zero six forty.", clock_s=1795512000.0)
    said_again = medic.says("Handover: left arm TQ went on at zero six thirty five, it's a CAT, one gram of TXA IV.",
                            clock_s=1795513200.0)
    assert {e.assertion for e in said_again} == {"restated"}
    card = medic.projector.card(1)
    [on_card] = card.b_injury.tourniquets  # the same tourniquet, given the time and the type said at the handover
    assert (on_card.event.what.device, on_card.event.time.at_hhmm, on_card.replaces) == ("CAT", "0635", [tourniquet.id])
    [dose] = card.f_medications.medications  # nothing new said of the TXA: the entry stands as it was made
    assert dose.event.id == txa.id and dose.event.time.at_hhmm == "0640"
    medic.says("Handover: second gram of TXA IV at zero seven ten, IO in the left tibia.", clock_s=1795513260.0)
    card = medic.projector.card(1)
    assert [e.event.time.at_hhmm for e in card.f_medications.medications] == ["0640", "0710"]  # one more, said so
    assert [e.event.what.site for e in card.e_treatments.access] == ["left tibia"]  # said first at the handover
    assert medic.rebuilt() == medic.projector.cards()
