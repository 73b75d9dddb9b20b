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


def test_a_stream_ending_in_any_length_of_pause_keeps_its_utterance(detector, corpus):
    """The stream's last part-window, padded with silence, may be the one where the pause ends the utterance."""
    speech = corpus.speak("request urgent medevac")
    for pause_samples in range(0, 12_000, 97):  # 0 to 750 ms of pause after the speech, across window boundaries
        segmenter = UtteranceSegmenter(detector, VadSettings())
        finished = segmenter.feed(np.concatenate([speech, np.zeros(pause_samples, np.float32)])) + segmenter.flush()
        assert len(finished) == 1, f"{pause_samples} samples of pause: {len(finished)} utterances"


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


def feed_pause_until_settled(segmenter, max_s=1.0):
    """Silence a VAD window at a time until the open utterance is settled; (ms of pause fed, ended utterances)."""
    ended = []
    for k in range(int(max_s * RATE_HZ) // 512):
        ended += segmenter.feed(np.zeros(512, np.float32))
        if segmenter.settled() is not None or ended:
            return 1000 * (k + 1) * 512 / RATE_HZ, ended
    return None, ended


def test_an_utterance_is_settled_once_its_pad_is_in_and_that_is_its_final_audio(detector, corpus):
    """speculative.py decodes the settled audio at once: it must be the very audio the pause then ends with."""
    settings = VadSettings()
    segmenter = UtteranceSegmenter(detector, settings)
    segmenter.feed(np.concatenate([np.zeros(RATE_HZ, np.float32), corpus.speak("tourniquet applied")]))
    at_ms, ended = feed_pause_until_settled(segmenter)
    assert not ended and at_ms < settings.min_silence_ms  # known before the pause ends the utterance
    index, start_s, audio = segmenter.settled()
    [utterance] = segmenter.feed(np.zeros(RATE_HZ, np.float32))
    assert (index, start_s) == (utterance.index, utterance.start_s) and np.array_equal(audio, utterance.audio)


def test_speech_resuming_in_the_pause_unsettles_the_utterance(detector, corpus):
    segmenter = UtteranceSegmenter(detector, VadSettings())
    segmenter.feed(np.concatenate([np.zeros(RATE_HZ // 2, np.float32), corpus.speak("tourniquet applied")]))
    _, ended = feed_pause_until_settled(segmenter)
    assert not ended and segmenter.settled() is not None
    assert segmenter.feed(corpus.speak("high and tight")[:RATE_HZ // 2]) == []
    assert segmenter.settled() is None and segmenter.in_speech
