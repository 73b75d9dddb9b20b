"""Watch-face times ("ten past nine", "half nine", "quarter to ten"): read on the 24-hour clock nearest the moment
they were said, never from a range of amounts or a reading."""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tcccd.plugins.card.clock_words import clock_words
from tests.support.card_said import card_of


def said(text: str, now_hhmm: str = "1000") -> list[str]:
    lower = text.lower()
    return [hhmm for hhmm, _, _ in clock_words(lower, 0, len(lower), now_hhmm)]


@pytest.mark.parametrize(("text", "now", "hhmm"), [
    ("TQ at ten past nine.", "1000", "0910"),
    ("TQ at twenty past nine.", "2140", "2120"),
    ("fentanyl at two.", "1645", "1400"),
    ("TXA at a quarter to ten", "1000", "0945"),
    ("splint on at half nine", "1000", "0930"),
    ("dressing at half past nine", "1000", "0930"),
    ("needle D at twenty five past eleven", "1140", "1125"),
    ("second gram at ten past ten", "0950", "1010"),
    ("morphine at nine o'clock", "2330", "2100"),
    ("TQ at 5 to 10.", "1000", "0955"),
    ("TQ at 10 past 9.", "1000", "0910"),
    ("correction, five to nine.", "0905", "0855"),
    ("CAT on, left arm, half nine.", "1000", "0930"),
])
def test_a_watch_face_time_is_the_reading_nearest_the_clock(text: str, now: str, hhmm: str) -> None:
    assert said(text, now) == [hhmm]


@pytest.mark.parametrize("text", [
    "ketamine, five to ten milligrams", "give it five to ten minutes", "pulse at ninety.", "pain at two.",
    "two to three units of blood", "at nine milligrams", "half the bag", "ten past the checkpoint", "at 9.50, rr 22",
    "at 9:15", "pain five to six.", "give him five to ten", "half the dose, half ten milligrams"])
def test_ranges_readings_and_other_words_are_no_time(text: str) -> None:
    assert said(text) == []


def test_through_the_card_a_past_time_is_the_act_s_and_one_ahead_is_a_plan(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Tourniquet on the left leg at ten past nine.") == {
        "c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].time = 0910"}
    assert card_of(card_stage, "TXA one gram IV at quarter to ten.") == {
        "c1 f medication[txa] = 1 g", "c1 f medication[txa].route = iv", "c1 f medication[txa].time = 0945"}
    assert card_of(card_stage, "Second gram of TXA at half ten.") == set()  # 10:30, said at 10:00
    assert card_of(card_stage, "Fentanyl fifty micrograms IN, a quarter of an hour ago.") == {
        "c1 f medication[fentanyl] = 50 mcg", "c1 f medication[fentanyl].route = in",
        "c1 f medication[fentanyl].time = 0945"}
    assert card_of(card_stage, "TXA two grams IV at ten to nine, correction, five to nine.") == {
        "c1 f medication[txa] = 2 g", "c1 f medication[txa].route = iv", "c1 f medication[txa].time = 0855"}
