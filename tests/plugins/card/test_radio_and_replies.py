"""Radio procedure and short replies: a request to say again, the other station reading back, a casualty who is
not this medic's, a one-word "no" or "n/a" after the thing it denies, a device that keeps peeling off, a dose still
to come at noon; the weapon "small arms"; slang drug names; a clock's minutes before a reading's word; AVPU said as
"with it"; and a correction two utterances later that says only the time.

Sentences written for these tests (not the corpus's). Each asserts the whole card, so a field added or lost fails.
The medic speaks at 10:00.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import card_of


@pytest.mark.parametrize("heard", [
    "Say again the ketamine dose, over.",
    "Chalice copies chest seal left, over.",
    "The driver has a TQ on, he's not my patient.",
    "Ketamine, no.",
    "Zofran, n/a.",
    "Chest seal keeps peeling, too sweaty.",
    "Moxi 400 PO at noon.",
])
def test_radio_procedure_and_short_replies_give_nothing(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize(("heard", "lines"), [
    ("Small arms contact, GSW to the right thigh.",
     {"c1 b mechanism = gsw", "c1 b injury[right thigh] = gunshot wound"}),
    ("Fent 50 mcg IV at 0950.", {"c1 f medication[fentanyl] = 50 mcg", "c1 f medication[fentanyl].route = iv",
                                 "c1 f medication[fentanyl].time = 0950"}),
    ("Ertap 1 g IV.", {"c1 f medication[ertapenem] = 1 g", "c1 f medication[ertapenem].route = iv"}),
    ("ketamine 20 mg IV at 9:52 resps picking up", {
        "c1 f medication[ketamine] = 20 mg", "c1 f medication[ketamine].route = iv",
        "c1 f medication[ketamine].time = 0952"}),
    ("He's with it, alert, pain's a four.", {"c1 c vitals[~1000].avpu = a", "c1 c vitals[~1000].pain = 4"}),
    ("His pressure's dropping, pulse 130.", {"c1 c vitals[~1000].pulse = 130"}),
])
def test_what_was_said_done_keeps_its_own_slots(card_stage: PluginHarness, heard: str, lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines


def test_a_correction_that_says_only_the_time_keeps_the_limb(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "TQ right leg at 0905.", "Ketamine 50 mg IM.", "Wait, the TQ was 0950.") == {
        "c1 b tourniquet[right leg] = extremity", "c1 b tourniquet[right leg].time = 0950",
        "c1 f medication[ketamine] = 50 mg", "c1 f medication[ketamine].route = im"}
