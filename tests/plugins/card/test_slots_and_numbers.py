"""Slots stay in their clause; numbers, units and vitals as a medic says them; casualty switches only when said as one.

Sentences written for these tests. Each asserts the whole card, so a slot that leaks into another item, or a value
read wrong, fails the test.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import Medic, card_of


def test_a_dose_a_unit_or_a_route_never_crosses_into_another_item(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "TXA 2 g, ketamine 50 mg.") == {
        "c1 f medication[txa] = 2 g", "c1 f medication[ketamine] = 50 mg"}
    assert card_of(card_stage, "Fentanyl fifty micrograms IV and ondansetron four milligrams IM.") == {
        "c1 f medication[fentanyl] = 50 mcg", "c1 f medication[fentanyl].route = iv",
        "c1 f medication[ondansetron] = 4 mg", "c1 f medication[ondansetron].route = im"}
    assert card_of(card_stage, "Morphine, five hundred milliliters of Hextend IO.") == {
        "c1 f medication[morphine] = yes", "c1 e fluid[hextend] = 500 ml", "c1 e fluid[hextend].route = io"}


def test_a_limb_or_side_said_after_a_comma_is_the_item_s(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Tourniquet applied, left leg.") == {"c1 b tourniquet[left leg] = extremity"}
    assert card_of(card_stage, "Chest seal placed, right side.") == {"c1 e breathing[chest seal] = right"}
    assert card_of(card_stage, "Tourniquet left arm, pressure dressing right thigh.") == {
        "c1 b tourniquet[left arm] = extremity", "c1 e dressing[pressure] = right thigh"}


def test_each_reading_takes_the_time_said_with_it(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Pulse 120 at 0930, pulse 104 at 0945.") == {
        "c1 c vitals[0930].pulse = 120", "c1 c vitals[0945].pulse = 104"}
    assert card_of(card_stage, "At zero nine fifty, pulse one ten, sats ninety four.") == {
        "c1 c vitals[0950].pulse = 110", "c1 c vitals[0950].spo2 = 94%"}
    assert card_of(card_stage, "TQ left leg zero nine thirty, TXA one gram IV zero nine forty.") == {
        "c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].time = 0930", "c1 f medication[txa] = 1 g",
        "c1 f medication[txa].route = iv", "c1 f medication[txa].time = 0940"}


def test_decimals_per_weight_doses_and_ranges(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Naloxone point four milligrams IV.") == {
        "c1 f medication[naloxone] = 0.4 mg", "c1 f medication[naloxone].route = iv"}
    assert card_of(card_stage, "Ketamine zero point five milligrams per kilogram IV.") == {
        "c1 f medication[ketamine] = 0.5 mg/kg", "c1 f medication[ketamine].route = iv"}
    assert card_of(card_stage, "Fentanyl fifty to one hundred micrograms IV.") == {
        "c1 f medication[fentanyl] = 50-100 mcg (unconfirmed)", "c1 f medication[fentanyl].route = iv (unconfirmed)"}
    assert card_of(card_stage, "Ran a unit of plasma IO.") == {
        "c1 e fluid[plasma] = 1 unit", "c1 e fluid[plasma].route = io"}
    assert card_of(card_stage, "Ketamine 30 IM.") == {"c1 f medication[ketamine] = 30",
                                                      "c1 f medication[ketamine].route = im"}


@pytest.mark.parametrize("heard, field", [
    ("Pulse a hundred and five.", "c1 c vitals[~1000].pulse = 105"),
    ("Pulse one oh five.", "c1 c vitals[~1000].pulse = 105"),
    ("Heart rate one twenty two.", "c1 c vitals[~1000].pulse = 122"),
    ("HR 88.", "c1 c vitals[~1000].pulse = 88"),
    ("Resp twenty.", "c1 c vitals[~1000].rr = 20"),
    ("Resp rate twenty four.", "c1 c vitals[~1000].rr = 24"),
    ("Respirations sixteen.", "c1 c vitals[~1000].rr = 16"),
    ("Breathing rate twelve.", "c1 c vitals[~1000].rr = 12"),
    ("Sats ninety one.", "c1 c vitals[~1000].spo2 = 91%"),
    ("Pulse ox reading ninety two.", "c1 c vitals[~1000].spo2 = 92%"),
    ("SpO2 ninety five percent on room air.", "c1 c vitals[~1000].spo2 = 95%"),
    ("BP palp ninety.", "c1 c vitals[~1000].bp = 90/?"),
    ("BP's seventy palpated.", "c1 c vitals[~1000].bp = 70/?"),
    ("Pain's an eight.", "c1 c vitals[~1000].pain = 8"),
])
def test_a_medic_s_vitals_vocabulary(card_stage: PluginHarness, heard: str, field: str) -> None:
    assert card_of(card_stage, heard) == {field}


def test_the_latest_avpu_level_said_wins(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "He was alert, now unresponsive.") == {"c1 c vitals[~1000].avpu = u"}
    assert card_of(card_stage, "Responds to voice, now alert and oriented.") == {"c1 c vitals[~1000].avpu = a"}


def test_digits_after_last_four_roster_or_zap_are_never_a_time(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Last four zero one two three, tourniquet left leg.") == {
        "c1 a header.last_four = 0123", "c1 b tourniquet[left leg] = extremity"}
    medic = Medic(card_stage)
    result = medic.says("Zap number 0915, TQ right arm.")
    assert all(e.time.at_hhmm is None for e in result.events)


def test_patient_and_a_number_switch_only_in_a_switch_phrase(card_stage: PluginHarness) -> None:
    medic = Medic(card_stage)
    medic.says("Gave the patient 2 units of whole blood.")
    assert medic.casualty == 1
    assert medic.fields() == {"c1 e fluid[whole blood] = 2 unit"}
    for heard, casualty in (("Patient number three.", 3), ("Back to patient one.", 1), ("Second casualty.", 2),
                            ("Next patient.", 3), ("Back to two, pulse ninety.", 2)):
        medic.says(heard)
        assert medic.casualty == casualty, heard
    assert any(f.startswith("c2 c vitals[") and f.endswith("].pulse = 90") for f in medic.fields())


def test_a_casualty_named_by_its_order_or_back_to_after_a_filler_is_a_switch(card_stage: PluginHarness) -> None:
    medic = Medic(card_stage)
    for heard, casualty in (("Moving on to the second guy, pulse ninety.", 2), ("Alright, back to the first guy.", 1),
                            ("Casualty three.", 3), ("And back to two.", 2), ("The first guy to the CCP.", 2),
                            ("Second unit of blood is up.", 2)):
        medic.says(heard)
        assert medic.casualty == casualty, heard
    assert "c2 c vitals[~1000].pulse = 90" in medic.fields()


def test_a_region_said_with_the_dressing_a_tourniquet_became_is_the_dressing_s(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Let the left leg TQ down and converted to a pressure dressing on the left calf.") == {
        "c1 e dressing[pressure] = left calf"}
    assert card_of(card_stage, "Right arm TQ converted to a pressure dressing.") == {
        "c1 e dressing[pressure] = right arm"}


def test_a_doubted_casualty_number_makes_what_is_filed_under_it_unconfirmed(card_stage: PluginHarness) -> None:
    medic = Medic(card_stage)
    medic.says("Casualty two, tourniquet left leg.", ["two"])
    medic.says("Pulse one twenty.")
    medic.says("Casualty three, pulse ninety.")
    assert medic.fields() == {"c2 b tourniquet[left leg] = extremity (unconfirmed)",
                              "c2 c vitals[~1000].pulse = 120 (unconfirmed)", "c3 c vitals[~1000].pulse = 90"}


def test_a_casualty_named_in_words_no_switch_reads_leaves_what_follows_unconfirmed(card_stage: PluginHarness) -> None:
    """Whisper wrote 'Back to casualty one' as 'Act to Casual V1': the readings after it may be casualty one's, so
    they are not shown confirmed on casualty two; a plain switch ends the doubt."""
    medic = Medic(card_stage)
    medic.says("Casualty two, pulse ninety.")
    medic.says("Act to Casual V1. BP 90/50.")
    medic.says("Responds to pain.")
    medic.says("Casualty two, sats ninety four.")
    medic.says("He is casual about it. Resps twenty.")
    assert medic.fields() == {"c2 c vitals[~1000].pulse = 90", "c2 c vitals[~1000].bp = 90/50 (unconfirmed)",
                              "c2 c vitals[~1000].avpu = p (unconfirmed)", "c2 c vitals[~1000].spo2 = 94%",
                              "c2 c vitals[~1000].rr = 20 (unconfirmed)"}
    other = Medic(card_stage)
    other.says("Patient V2. Pulse one hundred.")
    assert other.fields() == {"c1 c vitals[~1000].pulse = 100 (unconfirmed)"}


def test_a_reading_whose_time_was_said_in_doubted_words_is_unconfirmed(card_stage: PluginHarness) -> None:
    """'at 9.45': a time said in a form the recogniser doubted (and listed as uncertain) cannot be read, so the
    reading is not shown confirmed at the clock's minute (every reading of the utterance's sentences when the time
    opens it); a clause with no time said keeps its reading confirmed."""
    medic = Medic(card_stage)
    medic.says("Blood pressure 100/60 at 9.45, alert.", ["9.45"])
    medic.says("Pulse 88.")
    medic.says("At 9.50, respiratory rate 22. Sats 94%.", ["9.50"])
    assert medic.fields() == {"c1 c vitals[~1000].bp = 100/60 (unconfirmed)", "c1 c vitals[~1000].avpu = a",
                              "c1 c vitals[~1000].pulse = 88", "c1 c vitals[~1000].rr = 22 (unconfirmed)",
                              "c1 c vitals[~1000].spo2 = 94% (unconfirmed)"}


def test_an_over_long_value_is_cut_and_marked_and_the_transcript_kept(card_stage: PluginHarness) -> None:
    allergens = ", ".join(f"compound number {i}" for i in range(30))
    medic = Medic(card_stage)
    result = medic.says(f"Tourniquet left leg. Allergic to {allergens}. TXA one gram IV.")
    [allergy] = [e for e in result.events if e.kind == "allergies"]
    assert len(allergy.what.allergies) <= 200 and allergy.what.allergies.endswith("[cut]")
    assert {"c1 b tourniquet[left leg] = extremity", "c1 f medication[txa] = 1 g"} <= medic.fields()


def test_a_long_transcript_with_no_punctuation_is_read_whole(card_stage: PluginHarness) -> None:
    """41,000 characters Whisper did not punctuate: every piece is read (bench/card.py times it)."""
    piece = "tourniquet left leg at zero nine twelve pulse one twenty txa one gram iv gave morphine five milligrams im "
    text = (piece * (41000 // len(piece) + 1))[:41000]
    medic = Medic(card_stage)
    result = medic.says(text)
    kinds = [e.kind for e in result.events]
    assert kinds.count("tourniquet") > 300 and kinds.count("medication") > 300 and kinds.count("pulse") > 300


def test_a_wound_s_time_is_when_he_was_hit_and_no_time_crosses_and_into_a_second_device(
        card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Frag to the left calf at zero nine forty.") == {
        "c1 b injury[left calf] = shrapnel wound"}
    assert "c1 b tourniquet[right leg#2].time = 0915" not in card_of(
        card_stage, "TQ right leg 0915 and a second TQ right leg above it")


def test_a_pulse_takes_the_place_said_next_to_it_not_a_wound_said_before_or_a_dressing_after(
        card_stage: PluginHarness) -> None:
    lines = card_of(card_stage, "M GSW I right neck S pulse 128 sats 91 T Combat Gauze packed in the neck")
    assert "c1 c vitals[~1000].pulse = 128" in lines
    assert not any("pulse_location" in line for line in lines)
    assert "c1 c vitals[~1000].pulse_location = left radial" in card_of(card_stage, "Weak left radial pulse, 118.")


@pytest.mark.parametrize("heard, lines", [
    ("gsw left thigh tq left leg at 0907",
     {"c1 b injury[left thigh] = gunshot wound", "c1 b mechanism = gsw", "c1 b tourniquet[left leg] = extremity",
      "c1 b tourniquet[left leg].time = 0907"}),
    ("gave morphine 4 mg iv at 0933 zofran 4 mg iv too",
     {"c1 f medication[morphine] = 4 mg", "c1 f medication[morphine].route = iv",
      "c1 f medication[morphine].time = 0933", "c1 f medication[ondansetron] = 4 mg",
      "c1 f medication[ondansetron].route = iv"}),
    ("at 0940 pulse 118 at 0955 pulse 104", {"c1 c vitals[0940].pulse = 118", "c1 c vitals[0955].pulse = 104"}),
    ("casualty one tq right arm 0921 casualty two npa in",
     {"c1 b tourniquet[right arm] = extremity", "c1 b tourniquet[right arm].time = 0921", "c2 e airway[npa] = yes"}),
    ("mist mechanism blast injuries possible broken right ankle signs pulse 96",
     {"c1 b mechanism = blast", "c1 b injury[right ankle] = suspected fracture", "c1 c vitals[~1000].pulse = 96"})])
def test_a_report_without_punctuation_keeps_each_slot_with_its_own_mention(card_stage: PluginHarness, heard: str,
                                                                            lines: set[str]) -> None:
    """A wound's regions stop at the care said after it, a tourniquet's limb is the one said after it, a time said
    after one mention is not the next one's, and a report's section word ends a hedge's reach."""
    assert card_of(card_stage, heard) == lines
