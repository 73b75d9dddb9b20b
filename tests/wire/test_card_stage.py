"""The card stage's wire contract: what a `card.extract` accepts and refuses."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tcccd.wire.card_stage import CardExtract

BASE = {"text": "Pulse 110.", "request_id": "r1", "source": "mic", "utterance_ts": 1795511820.0,
        "utc_offset_min": 0, "casualty": 1}
WORD = {"text": "Pulse", "start_s": 0.0, "end_s": 0.4, "probability": 0.93, "start_char": 0, "end_char": 5}
UNCERTAIN = {"text": "110", "start_char": 6, "end_char": 9, "probability": 0.41, "alternative": "100"}


def test_segments_carry_the_asr_trail_and_optional_words_and_uncertain() -> None:
    segment = {"text": "Pulse 110.", "heard": "Pulse one ten.", "start_s": 0.0, "end_s": 1.2, "avg_logprob": -0.2,
               "no_speech_prob": 0.01, "corrections": [],
               "numbers": [{"heard": "one ten", "written": "110", "start_char": 6, "end_char": 13, "rule": "vital"}],
               "words": [WORD], "uncertain": [UNCERTAIN]}
    request = CardExtract.model_validate({**BASE, "segments": [segment]})
    assert request.segments[0].uncertain[0].alternative == "100" and request.segments[0].words[0].probability == 0.93
    assert CardExtract.model_validate({**BASE, "segments": [{"text": "Pulse 110."}]}).segments[0].heard is None


def test_audit_keys_the_card_does_not_read_are_ignored_not_refused() -> None:
    """The ASR's audio-check scores and readings are its own contract: a newer ASR must not break the card."""
    number = {"heard": "one ten", "written": "110", "start_char": 6, "end_char": 13, "rule": "vital",
              "reading": "110", "audio_logprob_heard": -3.0, "audio_logprob_written": -2.5}
    segment = {"text": "Pulse 110.", "numbers": [number], "uncertain": [{**UNCERTAIN, "score": 1}]}
    request = CardExtract.model_validate({**BASE, "segments": [segment]})
    assert request.segments[0].numbers[0].written == "110" and request.segments[0].uncertain[0].text == "110"


@pytest.mark.parametrize("change, field", [
    ({"casualty": 0}, "casualty"), ({"utc_offset_min": 15 * 60}, "utc_offset_min"), ({"surprise": 1}, "surprise"),
    ({"segments": [{"text": "x", "uncertain": [{"text": "x", "start_char": 0}]}]}, "end_char"),
    ({"segments": [{"text": "x", "words": [{"text": "x"}]}]}, "start_s")])
def test_a_bad_request_names_the_field(change: dict, field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        CardExtract.model_validate({**BASE, **change})
