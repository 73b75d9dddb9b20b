"""A condition said first ("Should his breathing get worse, ..."; "If he vomits, ..."), a drip stopped, a drug turned
down, and a tourniquet said twice in one breath ("TQ time 0915", "tq tq"), which is one tourniquet. And "stopped
the bleeding with a TQ", which is a tourniquet put on.

Sentences written for these tests (not the corpus's). Each asserts the whole card, so a field added or lost fails.
The medic speaks at 10:00.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import card_of


@pytest.mark.parametrize("heard", [
    "Should his breathing get worse, we go to a needle D.",
    "If he vomits, zofran 4 mg IV.",
    "Stopped the fentanyl infusion, he's too drowsy.",
    "He turned down the Tylenol.",
])
def test_a_condition_said_first_a_drip_stopped_or_a_drug_turned_down_gives_nothing(
        card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize(("heard", "lines"), [
    ("tq right arm 0905 tq time 0905",
     {"c1 b tourniquet[right arm] = extremity", "c1 b tourniquet[right arm].time = 0905"}),
    ("tq tq left leg 0940", {"c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].time = 0940"}),
    ("Stopped the bleeding with a TQ on the left leg.", {"c1 b tourniquet[left leg] = extremity"}),
])
def test_a_tourniquet_said_twice_in_one_breath_is_one(card_stage: PluginHarness, heard: str,
                                                      lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines
