"""Utterances through the real card stage, one after another, and the cards they make, for the card's unit tests.

Each utterance goes through Whisper's real writing steps (tests.support.card_corpus.segment: doubted words marked
where they land in the text), then the card plugin in a PluginHarness, as the daemon sends it (the casualty and the
carry of the previous utterance with it), then the projection; `fields` reads the cards in the notation of
tests/support/card_fields.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tcccd.card.projection import Projector
from tcccd.kit.testing import PluginHarness
from tcccd.wire.card_stage import CardEvents
from tcccd.wire.protocol import Message
from tests.support.card_corpus import segment
from tests.support.card_fields import fields
from tests.support.card_scenarios import reply_events

CLOCK_1000 = 1795687200.0  # 2026-11-26 10:00:00 UTC


class Medic:
    """One medic talking to one card stage: utterances in order, their events, the cards."""

    def __init__(self, harness: PluginHarness) -> None:
        self.harness = harness
        self.casualty = 1
        self.carry: dict[str, Any] = {}
        self.projector = Projector()
        self.seq = 0

    def says(self, heard: str, uncertain: list[str] | None = None, source: str = "mic") -> CardEvents:
        self.seq += 1
        seg = segment(heard, uncertain or [])
        assert seg is not None
        data = {"text": seg["text"], "segments": [seg], "journal_seq": self.seq, "request_id": f"u{self.seq}",
                "source": source, "utterance_ts": CLOCK_1000 + 10 * self.seq, "utc_offset_min": 0,
                "casualty": self.casualty, "carry": self.carry}
        [reply] = self.harness.request(Message("card.extract", data=data, final=True))
        result = reply_events(reply)
        self.casualty, self.carry = result.casualty, result.carry.model_dump(mode="json")
        for event in result.events:
            self.projector.apply(event)
        return result

    def fields(self) -> set[str]:
        """Every positive field on the cards (the notes left out), lower case."""
        return {f for f in fields(self.projector.cards()) if " g note" not in f}

    def notes(self) -> list[str]:
        return [e.event.words.text for card in self.projector.cards().cards for e in card.g_notes]


def card_of(harness: PluginHarness, *utterances: str | tuple[str, list[str]]) -> set[str]:
    """The positive fields after the utterances (an utterance with doubted words: (heard, [words]))."""
    medic = Medic(harness)
    for utterance in utterances:
        heard, doubted = (utterance, []) if isinstance(utterance, str) else utterance
        medic.says(heard, doubted)
    return medic.fields()


SAID_CARDS = Path(__file__).resolve().parents[1] / "data" / "card" / "unit" / "said_cards.yaml"


def said_cards(topic: str) -> list[tuple[str, set[str]]]:
    """The sentences of one topic of tests/data/card/unit/said_cards.yaml, each with the card it must make."""
    table = yaml.safe_load(SAID_CARDS.read_text())[topic]
    return [(row["said"], set(row["card"])) for row in table]
