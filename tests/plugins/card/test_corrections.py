"""Corrections as a medic says them: every cue, a restated slot or a whole entry, within one utterance and across two
(the stage keeps no state: what the correction needs travels in the request's `carry`)."""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import Medic, card_of


@pytest.mark.parametrize("cue", ["correction", "scratch that", "I mean", "sorry", "make that", "no wait",
                                 "actually"])
def test_every_cue_replaces_the_slot_it_restates(card_stage: PluginHarness, cue: str) -> None:
    assert card_of(card_stage, f"Pulse one forty, {cue}, one twenty.") == {"c1 c vitals[~1000].pulse = 120"}


def test_a_restated_limb_side_dose_route_or_time_keeps_the_rest_of_the_entry(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Tourniquet right arm at zero nine ten, I mean left arm.") == {
        "c1 b tourniquet[left arm] = extremity", "c1 b tourniquet[left arm].time = 0910"}
    assert card_of(card_stage, "Needle D right chest, sorry, left chest.") == {
        "c1 e breathing[needle decompression] = left"}
    assert card_of(card_stage, "Morphine ten milligrams IM, make that five milligrams.") == {
        "c1 f medication[morphine] = 5 mg", "c1 f medication[morphine].route = im"}
    assert card_of(card_stage, "TXA one gram IV at zero nine twenty, scratch that, zero nine twenty five.") == {
        "c1 f medication[txa] = 1 g", "c1 f medication[txa].route = iv", "c1 f medication[txa].time = 0925"}


def test_a_whole_entry_restated_replaces_the_last_of_its_kind(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Sats eighty eight. Correction, sats ninety eight.") == {
        "c1 c vitals[~1000].spo2 = 98%"}
    assert card_of(card_stage, "Evac category routine, actually make that priority.") == {
        "c1 a header.evac_category = priority"}


def test_a_correction_in_the_next_utterance_corrects_the_last_entry_said(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Fentanyl fifty micrograms IV.", "Correction, one hundred micrograms.") == {
        "c1 f medication[fentanyl] = 100 mcg", "c1 f medication[fentanyl].route = iv"}
    assert card_of(card_stage, "Tourniquet right leg.", "No wait, left leg.") == {
        "c1 b tourniquet[left leg] = extremity"}
    assert card_of(card_stage, "Ketamine twenty milligrams IM.", "Scratch that, it was IV.") == {
        "c1 f medication[ketamine] = 20 mg", "c1 f medication[ketamine].route = iv"}


def test_correction_said_alone_corrects_what_is_said_next(card_stage: PluginHarness) -> None:
    medic = Medic(card_stage)
    medic.says("Ketamine fifty milligrams IM.")
    assert medic.says("Correction.").carry.correcting
    result = medic.says("Ketamine twenty five milligrams IM.")
    assert [e.correction for e in result.events] == [True] and not result.carry.correcting
    assert medic.fields() == {"c1 f medication[ketamine] = 25 mg", "c1 f medication[ketamine].route = im"}
    assert card_of(card_stage, "Pulse ninety.", "Correction.", "Pulse nine.") == {
        "c1 c vitals[~1000].pulse = 9 (unconfirmed)"}


def test_a_cue_with_nothing_to_correct_invents_nothing(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Sorry, say again.") == set()
    assert card_of(card_stage, "Correction, one ten.") == set()
    assert card_of(card_stage, "Actually, roger that.") == set()


@pytest.mark.parametrize("heard, field", [
    ("Pulse one forty, no, one twenty.", "c1 c vitals[~1000].pulse = 120"),
    ("Pulse one forty, no, wait, one twenty.", "c1 c vitals[~1000].pulse = 120"),
    ("Needle D left chest. No, wait, right chest.", "c1 e breathing[needle decompression] = right"),
    ("Tourniquet right leg. Not the right, the left.", "c1 b tourniquet[left leg] = extremity"),
    ("Tourniquet right leg. Wait, it's the left.", "c1 b tourniquet[left leg] = extremity")])
def test_no_wait_and_not_the_one_side_the_other_restate_the_slot(card_stage: PluginHarness, heard: str,
                                                                  field: str) -> None:
    """Said with commas between the cue's words; the "no" of a correction denies nothing."""
    assert card_of(card_stage, heard) == {field}


def test_a_side_denied_in_passing_is_no_correction(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Chest seal on the right, not the left, left chest is clear.") == {
        "c1 e breathing[chest seal] = right"}
