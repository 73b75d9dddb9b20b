"""Allied medics' words and slang for what is not done: asking a mate for kit, slang orders, a go that failed, a
tourniquet let down, a drug left for later, the bloke on the other stretcher, what the course taught, a drug said
before its denial, a reminder of a dose to come. And the same words where the act was done.

Sentences written for these tests (not the corpus's). Each asserts the whole card, so a field added or lost fails.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import card_of


@pytest.mark.parametrize("heard", [
    "Can someone grab the BVM from the truck.", "Could somebody get a chest seal out.",
    "Slam a TQ on his left leg.", "Pop a chest seal on that, quick.", "Whack a pressure dressing on it.",
    "Had a go at the IO, no flash.", "The NPA kept kinking, I pulled it.",
    "Let the TQ down, no bleeding after ten minutes, so it's off now.",
    "Leave the morphine for later, his pressure's soft.", "Leave the TXA out, he's past three hours.",
    "The other bloke's got a chest seal on.", "The lad on the other stretcher is getting whole blood.",
    "His oppo gave himself the pill pack.", "On the course they told us ketamine fifty IM for pain.",
    "We were taught to pack junctional wounds with gauze.", "Morphine I did not give, his BP is too low.",
    "Next TXA at half ten, remind me.",
    "Is this the first tourniquet on his arm?", "Let me get a chest seal on him.",
    "Ketamine next, then we splint the arm.",
    "We're down to two chest seals and one bag of plasma.", "The chest seal won't stay on, he's too sweaty.",
    "He's too drowsy for ketamine.", "we didnt give txa", "dont push the morphine", "did u give the ketamine or not",
    "Waiting on the whole blood.", "The SAM splint wouldn't fit his arm.",
])
def test_not_done_in_allied_words_and_slang_gives_nothing(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize(("heard", "lines"), [
    ("Morph ten IM at nine forty.", {"c1 f medication[morphine] = 10", "c1 f medication[morphine].route = im",
                                     "c1 f medication[morphine].time = 0940"}),
    ("One gram of tranexamic IV, done.", {"c1 f medication[txa] = 1 g", "c1 f medication[txa].route = iv"}),
    ("Cannula in the right hand.", {"c1 e access[iv] = right hand"}),
    ("He's tubed.", {"c1 e airway[et tube] = yes"}),
    ("Penthrox for the pain, he's sucking on it now.", {"c1 f medication[methoxyflurane] = yes"}),
    ("Stretcher case, priority.", {"c1 a header.mobility = litter", "c1 a header.evac_category = priority"}),
    ("Hartmann's is running.", {"c1 e fluid[hartmann's] = yes"}),
])
def test_allied_names_for_drugs_devices_and_the_litter(card_stage: PluginHarness, heard: str,
                                                       lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines


def test_wait_it_was_restates_the_number(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Morphine ten IV, wait, it was five.") == {
        "c1 f medication[morphine] = 5", "c1 f medication[morphine].route = iv"}


def test_the_same_words_where_the_act_was_done_still_give_it(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Leave the tourniquet on, he's still bleeding.") == {"c1 b tourniquet[-] = yes"}
    assert card_of(card_stage, "Morphine I gave at nine forty, ten milligrams IM.") == {
        "c1 f medication[morphine] = 10 mg", "c1 f medication[morphine].route = im",
        "c1 f medication[morphine].time = 0940"}
