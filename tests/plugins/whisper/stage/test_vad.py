"""silero-vad gate: speech is found where espeak spoke, and nothing in silence, noise or breathing."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tcccd.plugins.whisper.stage.vad import RATE_HZ, Span, SpeechDetector, VadSettings, pack_spans


def test_finds_each_sentence_between_pauses(detector, corpus):
    pause = np.zeros(RATE_HZ, np.float32)
    first = corpus.speak("tourniquet applied at zero nine fifteen")
    second = corpus.speak("heart rate one twenty")
    audio = np.concatenate([pause, first, pause, second, pause])
    spans = detector.speech_spans(audio)
    assert len(spans) == 2
    assert spans[0].start_s == pytest.approx(1.0, abs=0.35)
    assert spans[1].end_s == pytest.approx((2 * RATE_HZ + len(first) + len(second)) / RATE_HZ, abs=0.5)


@pytest.mark.parametrize("kind", ["silence", "white", "pink", "brown", "breathing"])
def test_no_speech_in_noise(detector, corpus, kind):
    audio = corpus.noise(kind, 5.0, np.random.default_rng(1))
    assert detector.speech_spans(audio) == []


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("settings", [VadSettings(), VadSettings(max_utterance_s=3.0, min_silence_ms=300),
                                      VadSettings(threshold=0.3, speech_pad_ms=0, min_speech_ms=64)])
def test_spans_equal_silero_own_function(seed, settings):
    from silero_vad import get_speech_timestamps_from_probs

    from tcccd.plugins.whisper.stage.vad_spans import speech_spans_from_probs

    rng = np.random.default_rng(seed)
    # runs of speech-like and pause-like probabilities, with flicker around the thresholds
    probs = np.repeat(rng.choice([0.02, 0.3, 0.45, 0.6, 0.97], size=120), rng.integers(1, 40, size=120))
    probs = np.clip(probs + rng.normal(0, 0.08, size=len(probs)), 0, 1).tolist()
    length = len(probs) * 512 - int(rng.integers(0, 512))
    expected = get_speech_timestamps_from_probs(
        probs, sampling_rate=RATE_HZ, threshold=settings.threshold, neg_threshold=settings.release_threshold,
        min_speech_duration_ms=settings.min_speech_ms, max_speech_duration_s=settings.max_utterance_s,
        min_silence_duration_ms=settings.min_silence_ms, speech_pad_ms=settings.speech_pad_ms,
        audio_length_samples=length)
    ours = speech_spans_from_probs(
        probs, threshold=settings.threshold, neg_threshold=settings.release_threshold,
        min_speech_ms=settings.min_speech_ms, max_speech_s=settings.max_utterance_s,
        min_silence_ms=settings.min_silence_ms, speech_pad_ms=settings.speech_pad_ms, audio_length_samples=length)
    assert len(expected) > 1
    assert ours == [(s["start"], s["end"]) for s in expected]


def test_detector_never_imports_torch():
    """silero_vad's package imports torch: the detector only locates its ONNX file."""
    code = ("import sys, numpy as np\n"
            "from tcccd.plugins.whisper.stage.vad import SpeechDetector\n"
            "d = SpeechDetector.load()\n"
            "d.speech_spans(np.zeros(16000, np.float32))\n"
            "assert 'torch' not in sys.modules and 'silero_vad' not in sys.modules, 'imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_long_speech_is_cut_at_max_utterance(detector, corpus):
    speech = np.concatenate([corpus.speak("pack the wound with hemostatic gauze and hold pressure")] * 4)
    settings = VadSettings(max_utterance_s=3.0, min_silence_ms=2000)
    spans = SpeechDetector(detector._session, settings).speech_spans(speech)
    assert len(spans) >= 3
    assert all(s.end - s.start <= 3.0 * RATE_HZ + 1 for s in spans)


def test_pack_spans_joins_close_phrases_up_to_the_chunk_limit():
    spans = [Span(0, 16000), Span(24000, 40000), Span(200000, 216000)]
    assert pack_spans(spans, max_chunk_s=30, max_gap_s=1.0) == [Span(0, 40000), Span(200000, 216000)]
    assert pack_spans(spans, max_chunk_s=2, max_gap_s=1.0) == spans
