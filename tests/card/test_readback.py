"""The read-back's words: times as a medic says them, only what the event holds, flags said aloud."""

from __future__ import annotations

import pytest

from tcccd.card.readback import readback_text, spoken_time
from tcccd.kit.testing import PluginHarness
from tcccd.wire.card_stage import CardEvents
from tcccd.wire.protocol import Message
from tests.support.card_scenarios import CARD_PLUGIN, segment


@pytest.mark.parametrize(("hhmm", "words"), [("0915", "zero nine fifteen"), ("1400", "fourteen hundred"),
                                             ("0905", "zero nine zero five"), ("2359", "twenty three fifty nine"),
                                             ("0000", "zero zero hundred")])
def test_times_are_said_in_digit_pairs(hhmm, words):
    assert spoken_time(hhmm) == words


def events(tmp_path, heard: str, uncertain: list[str] | None = None) -> CardEvents:
    seg = segment(heard, uncertain or [])
    data = {"text": seg["text"], "segments": [seg], "journal_seq": 3, "request_id": "r", "source": "mic",
            "utterance_ts": 1795511820.0, "utc_offset_min": 0, "casualty": 1}
    with PluginHarness(CARD_PLUGIN, {}, tmp_path) as harness:
        [reply] = harness.request(Message("card.extract", data=data, final=True))
    return CardEvents.model_validate(reply.data)


def test_what_is_read_back_is_what_was_logged_and_nothing_else(tmp_path):
    said = events(tmp_path, "Casualty two. One gram of TXA IV at zero nine fifteen. No tourniquet needed. "
                            "Pulse seven hundred. Correction, pulse one ten.")
    assert readback_text(said.events) == ("Casualty 2. T X A, 1 gram, I V, zero nine fifteen. Pulse 700, check. "
                                          "Corrected, Pulse 110.")
    assert readback_text([]) == ""
