"""The card stage reads a medic's spoken language: negation, corrections, casualty switching, times, units, routes.

Utterances go through Whisper's real writing steps (tests.support.card_scenarios.segment) and then the card
plugin in a PluginHarness, as the daemon will send them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tcccd.kit.testing import PluginHarness
from tcccd.wire.card_stage import CardEvents
from tcccd.wire.protocol import Message
from tests.support.card_said import card_of
from tests.support.card_scenarios import CARD_PLUGIN, segment

CLOCK_0917 = 1795511820.0  # 2026-11-24 09:17:00 UTC


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory):
    with PluginHarness(CARD_PLUGIN, {}, tmp_path_factory.mktemp("card")) as h:
        yield h


def said(harness: PluginHarness, heard: str, casualty: int = 1, uncertain: list[str] | None = None,
         utc_offset_min: int = 0, journal_seq: int | None = 7) -> CardEvents:
    seg = segment(heard, uncertain or [])
    data = {"text": seg["text"], "segments": [seg], "journal_seq": journal_seq, "request_id": "r1",
            "source": "mic", "utterance_ts": CLOCK_0917, "utc_offset_min": utc_offset_min, "casualty": casualty}
    [reply] = harness.request(Message("card.extract", data=data, final=True))
    assert reply.type == "card.events", reply.data
    return CardEvents.model_validate(reply.data)


def kinds(result: CardEvents) -> list[tuple[Any, ...]]:
    return [(e.casualty, e.kind, e.negated) for e in result.events]


def test_negated_findings_are_kept_as_negated_never_positive(harness: PluginHarness) -> None:
    result = said(harness, "No tourniquet needed. Denies pain. No pulse in the left wrist, pulse eighty in the right "
                           "wrist.")
    assert kinds(result) == [(1, "tourniquet", True), (1, "pain", True), (1, "pulse", True), (1, "pulse", False)]
    notes = [e.words.text for e in result.events if e.negated]
    assert notes == ["No tourniquet needed", "Denies pain", "No pulse in the left wrist"]
    assert result.events[-1].what.rate == 80 and result.events[-1].what.location == "right wrist"
    assert said(harness, "Tourniquet not needed.").events[0].negated


def test_a_vital_without_its_number_is_not_an_event_unless_negated(harness: PluginHarness) -> None:
    assert said(harness, "Checking the pulse now. Pain is getting worse.").events == []


def test_correction_marks_what_follows_it_in_the_sentence_or_the_next(harness: PluginHarness) -> None:
    result = said(harness, "Pulse one thirty. Correction, pulse one ten.")
    assert [(e.what.rate, e.correction) for e in result.events] == [(130, False), (110, True)]
    result = said(harness, "Correction. Ketamine fifty milligrams IM.")
    assert [(e.kind, e.correction) for e in result.events] == [("medication", True)]


def test_casualty_switching_by_number_next_and_back(harness: PluginHarness) -> None:
    result = said(harness, "Casualty two, pressure dressing to the right arm. Next patient, alert. Back to casualty "
                           "one, pulse ninety.", casualty=1)
    assert [(e.casualty, e.kind) for e in result.events] == [
        (2, "casualty"), (2, "dressing"), (3, "casualty"), (3, "avpu"), (1, "casualty"), (1, "pulse")]
    assert result.casualty == 1
    assert said(harness, "Moving him to the casualty collection point.", casualty=3).casualty == 3


def test_spoken_time_and_utterance_clock_are_both_kept(harness: PluginHarness) -> None:
    [event] = said(harness, "Tourniquet left leg at zero nine twelve.").events
    assert event.time.spoken == "0912" and event.time.at_hhmm == "0912"
    assert event.time.logged_ts == CLOCK_0917 and event.time.logged_hhmm == "0917"
    [event] = said(harness, "Tourniquet left leg.", utc_offset_min=60).events
    assert event.time.spoken is None and event.time.at_hhmm is None and event.time.logged_hhmm == "1017"


def test_relative_times_count_back_from_the_utterance(harness: PluginHarness) -> None:
    [event] = said(harness, "Combat gauze packed five minutes ago.").events
    assert event.time.relative_min == -5 and event.time.at_hhmm == "0912" and event.time.spoken is None
    [event] = said(harness, "Tourniquet to the right arm half an hour ago.").events
    assert event.time.at_hhmm == "0847"


def test_a_four_digit_number_is_a_time_only_when_said_as_one(harness: PluginHarness) -> None:
    [event] = said(harness, "Last four 1234.").events
    assert event.kind == "last_four" and event.what.digits == "1234" and event.time.spoken is None


def test_doses_units_and_routes_stay_with_their_drug(harness: PluginHarness) -> None:
    result = said(harness, "Ketamine fifty milligrams IM and one gram of TXA IV.")
    assert [(e.what.name, e.what.dose, e.what.unit, e.what.route) for e in result.events] == [
        ("ketamine", 50, "mg", "IM"), ("TXA", 1, "g", "IV")]
    [fluid] = said(harness, "Five hundred milliliters of lactated ringers IO.").events
    assert (fluid.what.product, fluid.what.volume, fluid.what.unit, fluid.what.route) == (
        "lactated Ringer's", 500, "mL", "IO")


def test_iv_is_access_only_when_said_as_access(harness: PluginHarness) -> None:
    assert [e.kind for e in said(harness, "One gram of TXA IV.").events] == ["medication"]
    [access] = said(harness, "Eighteen gauge IV in the left forearm.").events
    assert (access.kind, access.what.access, access.what.site) == ("access", "IV", "left forearm")


def test_words_that_look_clinical_but_are_not(harness: PluginHarness) -> None:
    """No category from 'priority is', no pain score from 'responds to pain', no O2 from 'oxygen saturation'."""
    result = said(harness, "Our priority is the airway. He responds to pain. Oxygen saturation ninety percent. "
                           "The patient is in the vehicle.")
    assert [(e.kind, e.what.model_dump(exclude={"kind"})) for e in result.events] == [
        ("avpu", {"level": "P"}), ("spo2", {"percent": 90})]


@pytest.mark.parametrize("heard, kinds_found", [
    ("Grab the oxygen.", []), ("Get the NPA ready.", []), ("The tourniquet bag is empty.", []),
    ("Needs a tourniquet on the left leg.", []), ("Hand me the blanket.", []), ("The blanket is wet.", []),
    ("Alert the team.", []), ("Stay alert.", []), ("Check his pulse.", []), ("He is in pain.", []),
    ("Wrapped him in a blanket.", ["hypothermia"]), ("Tourniquet on the left leg.", ["tourniquet"]),
    ("Patient alert and oriented.", ["avpu"]), ("Oxygen on at fifteen liters, chest seal applied.",
                                                 ["breathing", "breathing"])])
def test_a_treatment_asked_for_or_talked_about_is_not_a_treatment_given(harness: PluginHarness, heard: str,
                                                                         kinds_found: list[str]) -> None:
    assert [e.kind for e in said(harness, heard).events] == kinds_found


def test_events_point_at_the_words_of_the_text_and_of_what_was_heard(harness: PluginHarness) -> None:
    result = said(harness, "Turn the kit applied to the left leg at zero nine twelve.")
    [event] = result.events
    assert event.words.text == "Tourniquet applied to the left leg at 0912"
    assert [h.text for h in event.heard] == ["Turn the kit applied to the left leg at zero nine twelve"]
    assert event.id == "j7.0" and event.transcript.journal_seq == 7 and event.rule == "tourniquet.limb"
    result = said(harness, "Pulse one ten.", journal_seq=None)
    assert result.events[0].id == "rr1.0"


def test_uncertain_words_and_impossible_values_are_flagged_not_dropped(harness: PluginHarness) -> None:
    [event] = said(harness, "TXA one gram IV.", uncertain=["TXA"]).events
    assert event.uncertain and not event.out_of_range and event.what.name == "TXA"
    [event] = said(harness, "Pulse seven hundred.").events
    assert event.out_of_range and event.what.rate == 700
    [event] = said(harness, "BP 80/90.").events
    assert event.out_of_range


def test_a_malformed_request_gets_a_clear_error(harness: PluginHarness) -> None:
    [reply] = harness.request(Message("card.extract", data={"text": "pulse 110", "casualty": 0}, final=True))
    assert reply.type == "error" and reply.data["code"] == "bad_message"
    assert "data.casualty" in reply.data["message"] and "data.request_id" in reply.data["message"]
    [reply] = harness.request(Message("transcribe", data={}, final=True))
    assert reply.type == "error" and "card.extract" in reply.data["message"]


def test_spans_map_into_the_right_segment_of_a_multi_segment_transcript(harness: PluginHarness) -> None:
    first, second = segment("Casualty two.", []), segment("One gram of TXA IV at zero nine fifteen.", ["TXA"])
    data = {"text": f"{first['text']} {second['text']}", "segments": [first, second], "journal_seq": 3,
            "request_id": "r2", "source": "mic", "utterance_ts": CLOCK_0917, "utc_offset_min": 0, "casualty": 1}
    [reply] = harness.request(Message("card.extract", data=data, final=True))
    switch, drug = CardEvents.model_validate(reply.data).events
    assert [(h.segment, h.text) for h in switch.heard] == [(0, "Casualty two")]
    assert drug.casualty == 2 and drug.words.text == "1 g TXA IV at 0915" and drug.uncertain
    assert [(h.segment, h.text) for h in drug.heard] == [(1, "One gram of TXA IV at zero nine fifteen")]
    assert data["text"][drug.words.start_char:drug.words.end_char] == drug.words.text


def test_a_transcript_without_a_heard_trail_still_gives_events(harness: PluginHarness) -> None:
    data = {"text": "Pulse 110.", "segments": [{"start_s": 0.0, "end_s": 1.0, "text": "Pulse 110."}],
            "journal_seq": 9, "request_id": "r3", "source": "wyoming", "utterance_ts": CLOCK_0917,
            "utc_offset_min": 0, "casualty": 1}
    [reply] = harness.request(Message("card.extract", data=data, final=True))
    [event] = CardEvents.model_validate(reply.data).events
    assert event.what.rate == 110 and event.heard == [] and event.transcript.source == "wyoming"


def test_heard_span_undoes_both_the_vocabulary_and_the_number_steps(harness: PluginHarness) -> None:
    [event] = said(harness, "Then one gram of drink Sammy Cassid IV, okay.").events
    assert event.words.text == "1 g tranexamic acid IV" and event.what.name == "TXA"
    assert [h.text for h in event.heard] == ["one gram of drink Sammy Cassid IV"]


def test_what_whisper_makes_of_the_kit_s_voice_is_read_as_said(harness: PluginHarness) -> None:
    """Found with the Piper voice through the daemon (tests/e2e/test_card_e2e.py): a tourniquet's type said as its
    own sentence is the same tourniquet, not a second one with no limb; "Casualty, too, ..." opening a sentence is
    casualty two; "too" anywhere else is not a switch."""
    result = said(harness, "Tourniquet applied high on the left leg at zero nine twelve. C-A-T tourniquet.")
    [tq] = result.events
    assert (tq.what.limb, tq.what.device, tq.time.at_hhmm) == ("left leg", "CAT", "0912")
    assert tq.words.text == "Tourniquet applied high on the left leg at 0912. C-A-T tourniquet"
    assert [e.what.limb for e in said(harness, "Tourniquet to the left leg. Tourniquet to the right arm.").events] \
        == ["left leg", "right arm"]
    [tq] = said(harness, "Tourniquet applied high on the left light at zero nine twelve. C-A-T, tourniquet.").events
    assert (tq.what.limb, tq.what.device) == (None, "CAT")  # the limb lost by the ASR: one tourniquet, limb blank
    switched = said(harness, "Casualty, too, same blast, pressure dressing to the right arm.")
    assert [(e.casualty, e.kind) for e in switched.events][:2] == [(2, "casualty"), (2, "mechanism")]
    assert switched.casualty == 2
    assert said(harness, "Treat this casualty too. Pulse one twenty.").casualty == 1
    assert said(harness, "The casualty, too, is bleeding.").casualty == 1


def test_a_last_four_is_four_digits_and_a_responder_s_stays_the_responder_s(harness: PluginHarness) -> None:
    """From the audio bench: 'First responder dies, last 4 5 5 6 7' (Whisper's 'Diaz, last four five five six
    seven') filled the casualty's last four with '5'."""
    [event] = said(harness, "First responder dies, last 4 5 5 6 7", casualty=2).events
    assert (event.kind, event.what.name, event.what.last_four) == ("responder", None, "5567")
    [event] = said(harness, "Last four 1 2 3 4.").events
    assert (event.kind, event.what.digits) == ("last_four", "1234")
    assert said(harness, "Last four 5.").events == []
    assert said(harness, "Last four 12345.").events == []


def test_the_first_one_on_him_is_the_first_responder_with_his_last_four(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "First guy on him was his battle buddy Ortiz, last four 7781.") == {
        "c1 h responder.name = ortiz", "c1 h responder.last_four = 7781"}
    assert card_of(card_stage, "First person on scene was Kim.") == {"c1 h responder.name = kim"}
