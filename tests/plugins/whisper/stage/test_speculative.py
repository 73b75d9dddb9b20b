"""Speculative finals: decoded once the utterance's audio is settled in a pause, the same record as before."""

from __future__ import annotations

import numpy as np
import pytest

from tcccd.kit.audio import to_pcm16
from tcccd.kit.testing import PluginHarness
from tcccd.wire.protocol import AudioFormat, Message

pytestmark = pytest.mark.slow
RATE_HZ = 16000


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    with PluginHarness("whisper", {"beam_size": 1}, tmp_path_factory.mktemp("whisper")) as h:
        yield h


def stream(harness, audio, chunk_s, request_id):
    pcm, step = to_pcm16(audio), 2 * int(chunk_s * RATE_HZ)
    pieces = [pcm[i:i + step] for i in range(0, len(pcm), step)]
    fmt = AudioFormat("pcm_s16le", RATE_HZ, 1)
    replies = harness.stream([Message("stream", id=request_id, payload=p, audio=fmt, final=k == len(pieces) - 1)
                              for k, p in enumerate(pieces)])
    return [r.data for r in replies if r.data.get("partial") is False]


def trimmed(audio):
    """Without the quiet espeak-ng leaves after the words (it would lengthen the pause that follows)."""
    loud = np.flatnonzero(np.abs(audio) > 0.01)
    return audio[: loud[-1] + 1]


def test_a_pause_that_ends_the_utterance_keeps_the_speculative_final_and_the_same_record(harness, corpus):
    pause = np.zeros(RATE_HZ, np.float32)
    audio = np.concatenate([pause, corpus.speak("tourniquet applied"), pause, corpus.speak("TXA given"), pause])
    used = harness.plugin.health()["speculative_finals_used"]
    live = stream(harness, audio, 0.1, "live")  # chunk by chunk: each final decoded once its pad was in
    assert harness.plugin.health()["speculative_finals_used"] == used + 2
    whole = stream(harness, audio, 60.0, "whole")  # one chunk: the pause ends each utterance in the same feed
    assert harness.plugin.health()["speculative_finals_used"] == used + 2
    assert [(u["text"], u["start_s"], u["end_s"]) for u in live] == [(u["text"], u["start_s"], u["end_s"])
                                                                     for u in whole]
    assert len(live) == 2 and all(u["text"] for u in live)


def test_speech_that_resumes_in_the_pause_abandons_the_speculative_final(harness, corpus):
    short_pause = np.zeros(int(0.35 * RATE_HZ), np.float32)  # past the 200 ms pad, short of the 500 ms endpoint
    audio = np.concatenate([np.zeros(RATE_HZ // 2, np.float32), trimmed(corpus.speak("tourniquet applied")),
                            short_pause, corpus.speak("high and tight"), np.zeros(RATE_HZ, np.float32)])
    before = harness.plugin.health()
    finals = stream(harness, audio, 0.064, "resumed")
    after = harness.plugin.health()
    assert len(finals) == 1 and "tight" in finals[0]["text"].lower()
    assert after["speculative_finals_abandoned"] > before["speculative_finals_abandoned"]
    assert after["speculative_finals_used"] == before["speculative_finals_used"] + 1
