"""The seek loop over long audio, the truncated audio context, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from tcccd.kit.plugin import PluginError
from tcccd.plugins.whisper.engine.transcriber import DecodeOptions
from tests.plugins.whisper.conftest import ROOT, SENTENCE, espeak_16k, word_recall

LONG_SENTENCES = [
    "The casualty has a wound to the right arm.",
    "We applied a tourniquet and the bleeding stopped.",
    "His airway is clear and he is breathing.",
    "Pulse is one hundred and ten.",
    "Give him water and keep him warm.",
]


def test_audio_longer_than_30_s_is_decoded_window_by_window(transcriber, tmp_path):
    gap = np.zeros(16000 * 3, dtype=np.float32)
    parts = []
    for sentence in LONG_SENTENCES * 2:
        parts += [espeak_16k(sentence, tmp_path), gap]
    audio = np.concatenate(parts)
    assert len(audio) / 16000 > 35
    result = transcriber.transcribe(audio, DecodeOptions(beam_size=1))
    assert word_recall(" ".join(LONG_SENTENCES), result.text) >= 0.7, result.text
    assert result.segments[-1].end_s > 30.0
    starts = [s.start_s for s in result.segments]
    assert starts == sorted(starts)
    assert result.segments[-1].end_s <= result.duration_s + 1.0


@pytest.mark.parametrize("audio_context", ["auto", "full"])
def test_both_audio_contexts_transcribe_an_utterance(transcriber, sentence_audio, audio_context):
    result = transcriber.transcribe(sentence_audio, DecodeOptions(beam_size=1, audio_context=audio_context))
    assert word_recall(SENTENCE, result.text) >= 0.8, result.text
    assert set(result.timings_ms) == {"mel_ms", "encode_ms", "decode_ms"}


def test_empty_audio_gives_empty_text(transcriber):
    result = transcriber.transcribe(np.zeros(0, dtype=np.float32), DecodeOptions(beam_size=1))
    assert result.text == "" and result.segments == []


@pytest.mark.parametrize("audio, message", [
    (np.zeros((2, 16000), dtype=np.float32), "1-D"),
    (np.zeros(16000, dtype=np.int16), "dtype"),
    (np.array([0.0, np.nan], dtype=np.float32), "NaN"),
])
def test_bad_audio_is_a_clear_error(transcriber, audio, message):
    with pytest.raises(PluginError, match=message) as error:
        transcriber.transcribe(audio, DecodeOptions())
    assert error.value.code == "bad_audio"


def test_bad_audio_context_option_is_a_clear_error(transcriber, sentence_audio):
    with pytest.raises(PluginError, match="'auto', 'full'"):
        transcriber.transcribe(sentence_audio, DecodeOptions(audio_context="half"))


def test_fallback_sampling_is_reproducible(transcriber, sentence_audio):
    """A medical record must not change between runs: every window falls back (no logprob can reach 0) and samples."""
    options = DecodeOptions(beam_size=5, temperatures=(0.6, 1.0), logprob_threshold=-0.0001)
    first = transcriber.transcribe(sentence_audio, options)
    second = transcriber.transcribe(sentence_audio, options)
    assert first.segments and all(s.temperature > 0 for s in first.segments)
    assert first.text == second.text
    assert [s.tokens for s in first.segments] == [s.tokens for s in second.segments]


def test_seed_changes_only_sampled_attempts(transcriber, sentence_audio):
    sampled = DecodeOptions(beam_size=5, temperatures=(1.0,))
    texts = {transcriber.transcribe(sentence_audio, DecodeOptions(beam_size=5, temperatures=(1.0,), seed=s)).text
             for s in range(4)}
    assert len(texts) > 1, texts  # the seed is really used: different seeds draw different samples
    assert transcriber.transcribe(sentence_audio, sampled).text == transcriber.transcribe(sentence_audio, sampled).text


def test_token_budget_bounds_a_short_window():
    from tcccd.plugins.whisper.engine.decoding import token_budget

    assert token_budget(83) < 64  # 1.66 s of audio: a babbling sample stops long before 224 tokens
    assert token_budget(1500) >= 224  # a full 30 s window keeps openai's limit


@pytest.fixture(scope="module")
def three_utterances(tmp_path_factory):
    out = tmp_path_factory.mktemp("utterances")
    texts = ("Tourniquet applied to the left thigh.", "Heart rate one hundred and twenty.",
             "Needle decompression done on the right chest, the patient is breathing easier now.")
    return [espeak_16k(text, out) for text in texts]


@pytest.mark.parametrize("temperatures", [(0.0, 0.2, 0.4), (0.0, 0.6)], ids=["beam", "forced-fallback"])
def test_pieces_side_by_side_give_the_texts_of_one_by_one(transcriber, three_utterances, temperatures):
    """A recording's VAD chunks decoded on two threads: same segments as one after another, in order."""
    logprob_threshold = -0.0001 if temperatures == (0.0, 0.6) else -1.0  # forced: every window samples too
    options = DecodeOptions(beam_size=5, temperatures=temperatures, logprob_threshold=logprob_threshold)
    one_by_one = [transcriber.transcribe(audio, options) for audio in three_utterances]
    side_by_side = transcriber.transcribe_many(three_utterances, options, workers=2)
    assert [r.text for r in side_by_side] == [r.text for r in one_by_one]
    assert [[s.tokens for s in r.segments] for r in side_by_side] == [[s.tokens for s in r.segments]
                                                                      for r in one_by_one]
    assert "heart rate" in side_by_side[1].text.lower() and "chest" in side_by_side[2].text.lower()


def test_text_that_loops_on_every_attempt_is_dropped_and_reported(transcriber, tmp_path):
    """Never emit a loop: a window decoded only as '20, 20, 20, ...' is dropped, with its span and what was heard."""
    audio = espeak_16k("twenty. twenty. twenty. twenty. twenty. twenty.", tmp_path)
    result = transcriber.transcribe(audio, DecodeOptions(beam_size=5))
    assert result.text == "" and result.segments == []
    [dropped] = result.dropped
    assert dropped.reason == "decoding_loop" and dropped.start_s == 0.0
    assert dropped.end_s == pytest.approx(len(audio) / 16000, abs=0.02)
    assert "20" in dropped.heard


def test_a_truncated_context_decode_that_loops_is_decoded_again_with_the_full_window(transcriber):
    """'auto' may only save time: on this real clip it loops ('15. 15. 15. ...'), so the full window decides."""
    import soundfile

    clip = ROOT / "tests" / "data" / "real-speech" / "s015.wav"
    audio = soundfile.read(clip, dtype="float32")[0]
    result = transcriber.transcribe(audio, DecodeOptions(beam_size=5, audio_context="auto"))
    assert result.full_window_retries == 1
    assert result.text.strip(" .") == "15" and result.dropped == []
