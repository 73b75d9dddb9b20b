"""A doctor's recommendation over the radio, negations typed without an apostrophe, a device that kinked or came
loose and was not put back, kit ordered but not here, care on an earlier deployment, a dose that "went in" (not
the nose), and a prolonged-care flowsheet whose heading gives its readings' time. And the same words where the act
was done.

Sentences written for these tests (not the corpus's). Each asserts the whole card, so a field added or lost fails.
The medic speaks at 10:00.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import card_of


@pytest.mark.parametrize("heard", [
    "The surgeon on the radio recommends fentanyl fifty micrograms IV.",
    "Teleconsult suggests two grams of cefazolin IV and a second unit of blood.",
    "Neither TXA nor morphine so far.",
    "the npa wouldnt pass on the left",
    "he couldnt get the IO in",
    "Needle D kinked, never got it through the chest wall.",
    "TQ came loose on the litter, we didn't put it back on, bleeding stopped.",
    "Whole blood's ordered but not here.",
    "He had a chest seal on the same side in Afghanistan, old scar there.",
    "I'll shield his left eye in a minute.",
])
def test_recommended_denied_failed_or_past_gives_nothing(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize(("heard", "lines"), [
    ("Doc recommended ketamine, so I pushed twenty milligrams of ketamine IV.",
     {"c1 f medication[ketamine] = 20 mg", "c1 f medication[ketamine].route = iv"}),
    ("We gave the ketamine, didnt give the TXA.", {"c1 f medication[ketamine] = yes"}),
    ("TXA one gram in, pulse 110.", {"c1 f medication[txa] = 1 g", "c1 c vitals[~1000].pulse = 110"}),
    ("Fentanyl 100 mcg IN.", {"c1 f medication[fentanyl] = 100 mcg", "c1 f medication[fentanyl].route = in"}),
    ("i gel wouldnt seat so went to a cric", {"c1 e airway[cric] = yes"}),
    ("TQ came loose on the litter, we put it back on.", {"c1 b tourniquet[-] = yes"}),
])
def test_the_act_done_beside_them_is_kept(card_stage: PluginHarness, heard: str, lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines


@pytest.mark.parametrize(("heard", "lines"), [
    ("PFC update, 0950. Pulse 96, BP 118/74.", {"c1 c vitals[0950].pulse = 96", "c1 c vitals[0950].bp = 118/74"}),
    ("0945 obs. Resps 16, pain 3.", {"c1 c vitals[0945].rr = 16", "c1 c vitals[0945].pain = 3"}),
    ("Flowsheet, zero nine thirty. Sats ninety five on room air.", {"c1 c vitals[0930].spo2 = 95%"}),
    ("Update. Pulse 110.", {"c1 c vitals[~1000].pulse = 110"}),  # no time said: the clock's minute
])
def test_a_flowsheet_heading_time_is_its_readings_time(card_stage: PluginHarness, heard: str,
                                                       lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines
