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


@pytest.mark.parametrize("heard, card", [
    ("Radial's weak, about one ten.", {"c1 c vitals[~1000].pulse = 110", "c1 c vitals[~1000].pulse_location = radial"}),
    ("No radial, femoral about one twenty.", {"c1 c vitals[~1000].pulse = 120",
                                              "c1 c vitals[~1000].pulse_location = femoral"}),
    ("Ninety heart rate, ninety over palp.", {"c1 c vitals[~1000].pulse = 90", "c1 c vitals[~1000].bp = 90/?"}),
    ("Heart rate 88, carotid.", {"c1 c vitals[~1000].pulse = 88", "c1 c vitals[~1000].pulse_location = carotid"}),
    ("Check the radial.", set())])
def test_a_pulse_said_by_where_it_was_felt_and_a_reading_said_before_its_word(card_stage: PluginHarness, heard: str,
                                                                              card: set[str]) -> None:
    assert card_of(card_stage, heard) == card


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


@pytest.mark.parametrize("heard, card", [
    ("Pulse dropped from one twenty to ninety.", {"c1 c vitals[~1000].pulse = 90"}),
    ("BP from 90/60 to 110/70.", {"c1 c vitals[~1000].bp = 110/70"}),
    ("His pressure's ninety over fifty.", {"c1 c vitals[~1000].bp = 90/50"}),
    ("Held pressure for three minutes.", set()),
    ("He's tachy at one thirty.", {"c1 c vitals[~1000].pulse = 130"}),
    ("Respirations are shallow, about thirty.", {"c1 c vitals[~1000].rr = 30"}),
    ("Evac priority urgent surgical.", {"c1 a header.evac_category = urgent surgical"}),
    ("He's allergic to nothing.", {"c1 a header.allergies = nka"}),
    ("Burns on the left arm, I'd say about nine percent.", {"c1 b injury[left arm] = burn", "c1 b burn_tbsa = 9%"}),
    ("Amputation of the left arm above the elbow.", {"c1 b injury[left arm] = amputation"}),
    ("Lacerated scalp.", {"c1 b injury[scalp] = laceration"}),
    ("Shot twice, chest and abdomen.", {"c1 b mechanism = gsw", "c1 b injury[chest] = gunshot wound",
                                        "c1 b injury[abdomen] = gunshot wound"})])
def test_readings_that_moved_a_pressure_said_plainly_and_injuries_said_as_what_happened(
        card_stage: PluginHarness, heard: str, card: set[str]) -> None:
    assert card_of(card_stage, heard) == card


@pytest.mark.parametrize("heard, card", [
    ("Ran two units of blood.", {"c1 e fluid[blood] = 2 unit"}),
    ("Lost a lot of blood.", set()),
    ("Blood sweep, no other bleeding.", set()),
    ("Zofran 4 ODT.", {"c1 f medication[ondansetron] = 4", "c1 f medication[ondansetron].route = po"})])
def test_blood_is_a_product_given_only_when_measured_out(card_stage: PluginHarness, heard: str,
                                                         card: set[str]) -> None:
    assert card_of(card_stage, heard) == card


@pytest.mark.parametrize("heard, card", [
    ("Reacts to codeine.", {"c1 a header.allergies = codeine"}),
    ("Denies allergies.", {"c1 a header.allergies = nka"}),
    ("He's got a latex allergy.", {"c1 a header.allergies = latex"}),
    ("Penicillin, sulfa and latex allergies.", {"c1 a header.allergies = penicillin, sulfa, latex"}),
    ("No antibiotics yet, penicillin allergy.", {"c1 a header.allergies = penicillin"}),
    ("Supposedly he had a tourniquet on earlier.", set()),
    ("Verify the chest seal is sealed.", set()),
    ("Recovery position, airway open.", {"c1 e airway[intact] = yes"}),
    ("Blizzard wrap on.", {"c1 f hypothermia = blizzard blanket"})])
def test_allergies_as_medics_list_them_hearsay_checks_and_states(card_stage: PluginHarness, heard: str,
                                                                 card: set[str]) -> None:
    assert card_of(card_stage, heard) == card


@pytest.mark.parametrize("heard, card", [
    ("Dressed the wound on the left forearm with an Israeli.", {
        "c1 e dressing[pressure] = left forearm", "c1 e dressing[pressure].product = israeli bandage"}),
    ("Israeli soldiers nearby.", set()),
    ("Nasal trumpet in the left nostril.", {"c1 e airway[npa] = yes"}),
    ("18 gauge in the left AC.", {"c1 e access[iv] = left ac"}),
    ("14 gauge needle to the right chest.", {"c1 e breathing[needle decompression] = right"}),
    ("Remember, TXA within three hours.", set()),
    ("No blood on hand, hung Hextend.", {"c1 e fluid[hextend] = yes"})])
def test_devices_by_their_street_names_and_kit_talk(card_stage: PluginHarness, heard: str, card: set[str]) -> None:
    assert card_of(card_stage, heard) == card


@pytest.mark.parametrize("heard, card", [
    ("Stepped on a mine.", {"c1 b mechanism = landmine"}),
    ("That one is mine.", set()),
    ("Grenade blast, shrapnel to the face.", {"c1 b mechanism = grenade", "c1 b injury[face] = shrapnel wound"}),
    ("Hit by a car.", {"c1 b mechanism = mvc"}),
    ("Roster alpha 1234.", {"c1 a header.battle_roster = a1234"}),
    ("The roster is full.", set())])
def test_mechanisms_as_said_in_the_field_and_a_roster_number(card_stage: PluginHarness, heard: str,
                                                             card: set[str]) -> None:
    assert card_of(card_stage, heard) == card


@pytest.mark.parametrize("heard, card", [
    ("Rates pain 6 out of 10.", {"c1 c vitals[~1000].pain = 6"}),
    ("He's awake and talking.", {"c1 c vitals[~1000].avpu = a"}),
    ("He's out of it, only groans to pain.", {"c1 c vitals[~1000].avpu = p"}),
    ("Opens his eyes to his name.", {"c1 c vitals[~1000].avpu = v"}),
    ("Withdraws to a sternal rub.", {"c1 c vitals[~1000].avpu = p"})])
def test_a_pain_score_out_of_ten_and_avpu_as_how_he_reacts(card_stage: PluginHarness, heard: str,
                                                           card: set[str]) -> None:
    assert card_of(card_stage, heard) == card
