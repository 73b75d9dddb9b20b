"""Live streams: utterances end at pauses, memory stays bounded, formats are checked."""

from __future__ import annotations

import numpy as np
import pytest

from tcccd.kit.plugin import PluginError
from tcccd.plugins.whisper.stage.streaming import StreamSession, UtteranceSegmenter
from tcccd.plugins.whisper.stage.vad import RATE_HZ, VadSettings
from tcccd.wire.protocol import AudioFormat


def feed_in_chunks(segmenter, audio, chunk_samples=1000):
    out = []
    for i in range(0, len(audio), chunk_samples):
        out += segmenter.feed(audio[i:i + chunk_samples])
    return out + segmenter.flush()


def test_utterances_end_at_pauses_in_any_chunking(detector, corpus):
    pause = np.zeros(RATE_HZ, np.float32)
    audio = np.concatenate([pause, corpus.speak("TXA given"), pause, corpus.speak("medevac requested"), pause])
    for chunk in (160, 1000, 7777):
        utterances = feed_in_chunks(UtteranceSegmenter(detector, VadSettings()), audio, chunk)
        assert [u.index for u in utterances] == [0, 1]
        assert utterances[0].start_s == pytest.approx(1.0, abs=0.35)
        assert utterances[1].start_s > utterances[0].end_s


def test_open_utterance_is_flushed_at_stream_end(detector, corpus):
    segmenter = UtteranceSegmenter(detector, VadSettings())
    assert segmenter.feed(corpus.speak("needle decompression done")) == []
    assert segmenter.in_speech
    [last] = segmenter.flush()
    assert last.end_s - last.start_s > 0.8


def test_memory_stays_bounded_over_minutes(detector, corpus):
    settings = VadSettings(max_utterance_s=5.0)
    segmenter = UtteranceSegmenter(detector, settings)
    speech = corpus.speak("pack the wound with hemostatic gauze and hold pressure for three minutes")
    rng = np.random.default_rng(0)
    most_held = 0
    for _ in range(12):  # about a minute of speech and noise, with no pause long enough to end an utterance
        segmenter.feed(np.concatenate([speech, corpus.noise("pink", 0.2, rng, rms=0.005)]))
        most_held = max(most_held, segmenter.held_samples)
    assert most_held <= 5.0 * RATE_HZ + 2048


def test_silence_and_noise_give_no_utterance(detector, corpus):
    rng = np.random.default_rng(2)
    for kind in ("silence", "white", "brown", "breathing"):
        assert feed_in_chunks(UtteranceSegmenter(detector, VadSettings()), corpus.noise(kind, 4.0, rng)) == []


def test_session_resamples_declared_pcm_and_rejects_bad_chunks(detector):
    fmt = AudioFormat("pcm_s16le", 48000, 2)
    session = StreamSession.open(fmt, detector, VadSettings())
    stereo = np.zeros((4800, 2), "<i2").tobytes()
    got = session.samples(stereo, fmt, last=False)
    got = np.concatenate([got, session.samples(b"", None, last=True)])
    assert len(got) == pytest.approx(1600, abs=64)
    with pytest.raises(PluginError, match="whole number"):
        session.samples(b"\x00\x01\x02", None, last=False)
    with pytest.raises(PluginError, match="changed mid-stream"):
        session.samples(stereo, AudioFormat("pcm_s16le", 16000, 1), last=False)
    with pytest.raises(PluginError, match="raw PCM"):
        StreamSession.open(AudioFormat("wav"), detector, VadSettings())
