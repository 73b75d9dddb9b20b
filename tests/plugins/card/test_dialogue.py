"""What one sentence leaves for the next: a question answered by a value alone, a list continued with "And ...",
a device done again after it failed or came off; in one transcript and across transcripts (through the carry, as
the daemon sends it back).

Sentences written for these tests. Each asserts the whole card.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import Medic, card_of


def test_a_question_about_a_reading_is_answered_by_the_value_said_next(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "What's his heart rate?", "About one ten, radial.") == {
        "c1 c vitals[~1000].pulse = 110", "c1 c vitals[~1000].pulse_location = radial"}
    assert card_of(card_stage, "Got a BP yet?", "Eighty palp.") == {"c1 c vitals[~1000].bp = 80/?"}
    assert card_of(card_stage, "Sats?", "Ninety one percent.") == {"c1 c vitals[~1000].spo2 = 91%"}
    assert card_of(card_stage, "Any allergies? Sulfa and latex.") == {"c1 a header.allergies = sulfa, latex"}
    assert card_of(card_stage, "Does he have allergies?", "None known.") == {"c1 a header.allergies = nka"}


@pytest.mark.parametrize("utterances", [
    ("What's his pulse?", "No, couldn't get one."), ("Any allergies?", "Not sure, he's out of it."),
    ("Did he get TXA?", "Yes."), ("Did he get TXA?", "One gram."), ("What's his pulse?", "Two casualties inbound."),
    ("How's his breathing?", "Tourniquet's holding."), ("Any allergies?", "He said something about bees maybe.")])
def test_what_is_not_a_value_or_answers_about_a_treatment_gives_nothing(card_stage: PluginHarness,
                                                                        utterances: tuple[str, str]) -> None:
    assert card_of(card_stage, *utterances) - {"c1 b tourniquet[-] = yes"} == set()


def test_only_the_next_sentence_answers(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "What's his pulse?", "Roger.", "One twenty.") == set()


def test_a_sentence_that_continues_a_request_or_a_plan_is_one_too(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Hand me a chest seal.", "And the NPA.") == set()
    assert card_of(card_stage, "Going to give TXA. And ketamine fifty IM.") == set()
    assert card_of(card_stage, "TQ on the left leg.", "And TXA one gram IV.") == {
        "c1 b tourniquet[left leg] = extremity", "c1 f medication[txa] = 1 g", "c1 f medication[txa].route = iv"}
    assert card_of(card_stage, "Get me a TQ.", "Also, gave him ketamine fifty IM.") == {
        "c1 f medication[ketamine] = 50", "c1 f medication[ketamine].route = im"}


def test_what_failed_or_came_off_and_is_done_again_is_on_the_card_with_its_new_slots(
        card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Missed the IV in the left arm, got it in the right arm.") == {
        "c1 e access[iv] = right arm"}
    assert card_of(card_stage, "Chest seal wouldn't stick.", "Replaced it, left side.") == {
        "c1 e breathing[chest seal] = left"}
    assert card_of(card_stage, "NPA came out.", "Reinserted it.") == {"c1 e airway[npa] = yes"}


@pytest.mark.parametrize("utterances", [
    ("IV blew.", "We'll put another one in."), ("IO failed.", "Should I try another one?"),
    ("IV blew.", "Tourniquet's still on, I checked it."), ("The NPA came out.", "Roger.", "Got it back in.")])
def test_a_device_only_planned_again_or_a_reference_too_far_gives_nothing(card_stage: PluginHarness,
                                                                         utterances: tuple[str, ...]) -> None:
    assert not {f for f in card_of(card_stage, *utterances) if "access" in f or "airway" in f}


def test_what_is_pending_travels_in_the_carry_and_is_spent_once(card_stage: PluginHarness) -> None:
    medic = Medic(card_stage)
    medic.says("What's his resp rate?")
    assert medic.carry["asked"] == "rr" and medic.carry["open_status"] == "question"
    medic.says("Twenty two.")
    assert medic.carry["asked"] is None and medic.fields() == {"c1 c vitals[~1000].rr = 22"}
    medic.says("IO attempt failed.")
    assert medic.carry["undone"]["what"]["kind"] == "access"
    medic.says("Second one's in, left humerus.")
    assert medic.carry["undone"] is None
    assert "c1 e access[io] = left humerus" in medic.fields()
