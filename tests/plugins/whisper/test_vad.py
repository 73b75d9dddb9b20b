"""silero-vad gate: speech is found where espeak spoke, and nothing in silence, noise or breathing."""

from __future__ import annotations

import numpy as np
import pytest

from tcccd.plugins.whisper.vad import RATE_HZ, Span, SpeechDetector, VadSettings, pack_spans


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


def test_restores_torch_thread_count():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        detector = SpeechDetector.load(VadSettings())
        detector.speech_spans(np.zeros(RATE_HZ, np.float32))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


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
