"""Sentences as medics say them, each with the whole card it must make (tests/data/card/unit/said_cards.yaml).

Written for the card's unit tests, not taken from the corpus; grouped by what they test (the file's keys: pulses
said by their site, allergies as medics list them, a device swapped for another...). A field added or lost fails.
"""

from __future__ import annotations

import pytest
import yaml

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import SAID_CARDS, card_of, said_cards

CASES = [pytest.param(heard, card, id=f"{topic}: {heard}")
         for topic in yaml.safe_load(SAID_CARDS.read_text()) for heard, card in said_cards(topic)]


def test_the_table_holds_every_group_of_sentences() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("heard, card", CASES)
def test_what_is_said_makes_the_card_written_beside_it(card_stage: PluginHarness, heard: str, card: set[str]) -> None:
    assert card_of(card_stage, heard) == card
