"""How medics say things the first rules did not read: amounts with no unit, pulses by where they were felt, a
reading said before its word, a fall with its height, IV/IO access said by its site, plurals, sides said after the
part; and what is not done in the words of history, plans, future times, removal and other people.

Sentences written for these tests (not the corpus's). Each asserts the whole card, so a field added or lost fails.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tcccd.plugins.card.numbers import first_number
from tests.support.card_said import card_of


def test_an_amount_said_with_no_unit_is_kept_as_the_bare_number(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Pushed seventy five of fentanyl.") == {"c1 f medication[fentanyl] = 75"}
    assert card_of(card_stage, "Plasma-Lyte five hundred in.") == {"c1 e fluid[plasma-lyte] = 500"}
    assert card_of(card_stage, "Gave four hundred moxi PO.") == {
        "c1 f medication[moxifloxacin] = 400", "c1 f medication[moxifloxacin].route = po"}
    assert card_of(card_stage, "Ondansetron four IV.") == {
        "c1 f medication[ondansetron] = 4", "c1 f medication[ondansetron].route = iv"}
    assert card_of(card_stage, "Second unit of whole blood is going in.") == {"c1 e fluid[whole blood] = 1 unit"}


def test_a_number_step_left_half_written_reads_as_said() -> None:
    number = first_number("sats 1 oh 4%", 0, 12)
    assert number is not None and number.value == 104


def test_a_fall_is_a_mechanism_with_where_from_or_how_far_never_a_falling_reading(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Fell about twenty feet from a guard tower.") == {"c1 b mechanism = fall"}
    assert card_of(card_stage, "He fell off the top of the MRAP, possible fracture left ankle.") == {
        "c1 b mechanism = fall", "c1 b injury[left ankle] = suspected fracture"}
    assert card_of(card_stage, "His pressure fell from one ten to ninety.") == set()


def test_access_said_by_its_site_or_as_a_line_and_never_a_drug_s_route(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "IO left tibia.") == {"c1 e access[io] = left tibia"}
    assert card_of(card_stage, "Got a line in the right forearm.") == {"c1 e access[iv] = right forearm"}
    assert card_of(card_stage, "TXA one gram IO right humerus.") == {
        "c1 f medication[txa] = 1 g", "c1 f medication[txa].route = io"}
    assert card_of(card_stage, "Hold the line.") == set()
    assert card_of(card_stage, "Line five, two litter.") == set()


def test_plurals_repeated_parts_and_a_side_said_after_the_part(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "TQs on both arms.") == {
        "c1 b tourniquet[right arm] = extremity", "c1 b tourniquet[left arm] = extremity"}
    assert card_of(card_stage, "Two GSWs, left hip and right calf.") == {
        "c1 b mechanism = gsw", "c1 b injury[left hip] = gunshot wound", "c1 b injury[right calf] = gunshot wound"}
    assert card_of(card_stage, "Shrapnel wound left calf, bleeding controlled on the calf.") == {
        "c1 b injury[left calf] = shrapnel wound"}
    assert card_of(card_stage, "GSW to the shoulder, the left.") == {
        "c1 b mechanism = gsw", "c1 b injury[left shoulder] = gunshot wound"}
    assert card_of(card_stage, "CATs on both arms at 0940.") == {
        "c1 b tourniquet[right arm] = extremity", "c1 b tourniquet[right arm].type = cat",
        "c1 b tourniquet[right arm].time = 0940", "c1 b tourniquet[left arm] = extremity",
        "c1 b tourniquet[left arm].type = cat", "c1 b tourniquet[left arm].time = 0940"}
    assert card_of(card_stage, "The cats in the compound are fed.") == set()  # only the capitals say the device


def test_a_reading_that_came_down_to_a_value_is_that_reading(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Heart rate came down to one oh two after the fluids.") == {
        "c1 c vitals[~1000].pulse = 102"}
    assert card_of(card_stage, "TQ came down at 0950.") == set()  # a tourniquet that came down is off


@pytest.mark.parametrize("heard", [
    "Old shrapnel scar on the right arm.", "He's had morphine before.", "Previous TBI from a blast.",
    "Back in 2019 he had a TQ on the left leg.", "Prior fracture of the left wrist, healed.",
    "He had a chest tube on his first deployment.", "Broke his right ankle in twenty eighteen."])
def test_history_gives_nothing(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize("heard", [
    "Plan is TXA once we're moving.", "Doc wants him on ketamine.", "Morphine at eleven thirty.",
    "Next round of TXA goes with the bird.", "TQ down from the right arm at zero nine fifty.",
    "The interpreter is allergic to morphine.", "Could be a pneumothorax.", "We'd like to get blood in him."])
def test_plans_future_times_removal_other_people_and_guesses_give_nothing(card_stage: PluginHarness,
                                                                          heard: str) -> None:
    assert card_of(card_stage, heard) == set()


def test_a_time_said_just_ahead_of_the_kit_s_clock_is_a_watch_s_drift_a_later_one_a_plan(
        card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Morphine 10 mg IV at 1003.") == {
        "c1 f medication[morphine] = 10 mg", "c1 f medication[morphine].route = iv",
        "c1 f medication[morphine].time = 1003"}
    assert card_of(card_stage, "Morphine 10 mg IV at 1020.") == set()
    assert card_of(card_stage, "Possible pneumothorax.") == {"c1 b injury[-] = suspected pneumothorax"}


@pytest.mark.parametrize("heard", [
    "TXA's out, he's past three hours.", "Ketamine drawn up, but not pushed yet.", "He refused the pill pack.",
    "Patient declined morphine.", "Only if he desaturates, O2.", "Normally I'd pack it with combat gauze.",
    "Usually a TQ on a leg like that.", "Chest seal won't stick to him."])
def test_refusal_a_drug_out_a_condition_said_first_and_what_is_usually_done_give_no_field(
        card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


def test_an_injury_said_as_a_new_item_is_never_another_injury_s_region(card_stage: PluginHarness) -> None:
    """'..., and a scalp lac': the region belongs to the injury said with it (or to none), never to the one before:
    a broken scalp nobody found is worse than a laceration missed."""
    assert card_of(card_stage, "Suspected broken left wrist, and a chin lac.") == {
        "c1 b injury[left wrist] = suspected fracture", "c1 b injury[chin] = laceration"}
    assert card_of(card_stage, "GSW to the left calf and a graze on the right arm.") == {
        "c1 b mechanism = gsw", "c1 b injury[left calf] = gunshot wound"}
    assert card_of(card_stage, "Took a round in the left shoulder, small lac over the right eyebrow.") == {
        "c1 b mechanism = gsw", "c1 b injury[left shoulder] = gunshot wound",
        "c1 b injury[right eyebrow] = laceration"}


def test_a_pressure_in_words_the_number_step_left_and_a_palpated_one_are_read(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "BP one oh four over fifty eight.") == {"c1 c vitals[~1000].bp = 104/58"}
    assert card_of(card_stage, "His pressure's eighty palp.") == {"c1 c vitals[~1000].bp = 80/?"}
    assert card_of(card_stage, "Pressure's eighty.") == set()  # no palp, no ratio: which pressure is not said
    assert card_of(card_stage, "Pulse ox says ninety one.") == {"c1 c vitals[~1000].spo2 = 91%"}
    assert card_of(card_stage, "Allergic to codeine and to iodine.") == {"c1 a header.allergies = codeine, iodine"}


@pytest.mark.parametrize("heard, lines", [
    ("um she's urgent surgical litter",
     {"c1 a header.evac_category = urgent surgical", "c1 a header.mobility = litter"}),
    ("Evac category for her is routine, and she's ambulatory.",
     {"c1 a header.evac_category = routine", "c1 a header.mobility = ambulatory"}),
    ("She's going out priority, on a litter.",
     {"c1 a header.evac_category = priority", "c1 a header.mobility = litter"}),
    ("Urgent, get the vehicles moving.", set())])
def test_evacuation_said_in_a_handover_s_words(card_stage: PluginHarness, heard: str, lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines


@pytest.mark.parametrize("heard, line", [
    ("Pulse, it's about one ten, radial.", "c1 c vitals[~1000].pulse = 110"),
    ("His pressure's like ninety over fifty.", "c1 c vitals[~1000].bp = 90/50"),
    ("She'll open her eyes if you shout at her.", "c1 c vitals[~1000].avpu = v"),
    ("Only pulls away when I pinch the nail bed.", "c1 c vitals[~1000].avpu = p"),
    ("Pulse 96, he's an A.", "c1 c vitals[~1000].avpu = a"),
    ("He's a P now, was a V when we got here.", "c1 c vitals[~1000].avpu = p")])
def test_readings_and_levels_said_loosely(card_stage: PluginHarness, heard: str, line: str) -> None:
    assert line in card_of(card_stage, heard)


def test_a_denial_said_without_punctuation_stops_at_the_next_act(card_stage: PluginHarness) -> None:
    lines = card_of(card_stage, "GSW left buttock no exit packed it with Celox pulse 104")
    assert {"c1 e dressing[hemostatic].product = celox", "c1 c vitals[~1000].pulse = 104"} <= lines
    assert card_of(card_stage, "Never got the NPA in.") == set()
    assert card_of(card_stage, "Haven't yet given the TXA.") == set()


@pytest.mark.parametrize("heard, lines", [
    ("morphine 5 mg iv at 0940", {"c1 f medication[morphine] = 5 mg", "c1 f medication[morphine].route = iv",
                                  "c1 f medication[morphine].time = 0940"}),
    ("cefazolin 2g IV", {"c1 f medication[cefazolin] = 2 g", "c1 f medication[cefazolin].route = iv"}),
    ("TQ left leg 9:05", {"c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].time = 0905"}),
    ("paracetamol 1 g po", {"c1 f medication[acetaminophen] = 1 g", "c1 f medication[acetaminophen].route = po"}),
    ("IV 20 gauge right hand", {"c1 e access[iv] = right hand"}),
    ("I'm in the truck, po box later", set())])
def test_forms_as_the_recogniser_writes_them(card_stage: PluginHarness, heard: str, lines: set[str]) -> None:
    """Lower-case routes after a dose, a unit written against its number, a clock time with a colon."""
    assert card_of(card_stage, heard) == lines


@pytest.mark.parametrize("heard, line", [
    ("hr 132 rr 28", "c1 c vitals[~1000].rr = 28"), ("hr 132 rr 28", "c1 c vitals[~1000].pulse = 132"),
    ("His pressure's eighty-ish over fifty.", "c1 c vitals[~1000].bp = 80/50"),
    ("He opens his eyes only when I grind on his sternum.", "c1 c vitals[~1000].avpu = p"),
    ("Hold the morphine, she's only a P.", "c1 c vitals[~1000].avpu = p"),
    ("Pulse maybe one forty, hard to count.", "c1 c vitals[~1000].pulse = 140")])
def test_readings_said_lower_case_as_an_estimate_or_by_what_rouses_him(card_stage: PluginHarness, heard: str,
                                                                       line: str) -> None:
    assert line in card_of(card_stage, heard)


@pytest.mark.parametrize("heard, lines", [
    ("Sats ninety, or rather ninety two.", {"c1 c vitals[~1000].spo2 = 92%"}),
    ("Morphine four IM, wait, IV.", {"c1 f medication[morphine] = 4", "c1 f medication[morphine].route = iv"}),
    ("TQ left arm at oh nine twenty, wait, oh nine fifteen.",
     {"c1 b tourniquet[left arm] = extremity", "c1 b tourniquet[left arm].time = 0915"})])
def test_or_rather_and_wait_restate_a_number_a_route_or_a_time(card_stage: PluginHarness, heard: str,
                                                               lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines
