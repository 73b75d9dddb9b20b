"""The loop detector: what tiny.en wrote on the bundled samples, and what a medic may really say."""

from __future__ import annotations

import pytest

from tcccd.plugins.whisper.engine.repetition import looped


@pytest.mark.parametrize("text", [
    "Turn the guitar line at 0.515, 2015, 2015, 2015, 2015, 2015, 2015, 2015, 2016, 2015, 2015",
    "turn it up line at 0.515 turn it up line at 0.515",
    "Heart rate 120 Heart rate 120 Heart rate 120",
    "you you you you",
])
def test_decoder_loops_are_caught(text: str):
    assert looped(text)


@pytest.mark.parametrize("text", [
    "Tourniquet applied at 09:15.",
    "Check, check, check.",
    "Left leg, left leg.",
    "Heart rate 120, blood pressure 90 over 60, heart rate steady.",
    "Request urgent medevac for one litter casualty.",
    "",
])
def test_real_speech_is_not_called_a_loop(text: str):
    assert not looped(text)
