"""The first words of a recording that starts on speech are kept, in a file and in a live stream."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from tcccd.kit.audio import to_pcm16
from tcccd.kit.testing import PluginHarness
from tcccd.plugins.whisper.review.textnorm import normalize
from tcccd.wire.protocol import AudioFormat, Message

ROOT = Path(__file__).resolve().parents[4]
CLIPS = sorted((ROOT / "tests" / "data" / "first-words").glob("*.flac"))
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    with PluginHarness("whisper", {"beam_size": 5}, tmp_path_factory.mktemp("whisper")) as h:
        yield h


def opens_with_the_tourniquet(text: str) -> bool:
    """'Tourniquet applied', or tiny.en's own spelling of it ('Turn it get applied'): a word for each sound."""
    words = normalize(text).split()
    return bool(words) and words[0] in ("tourniquet", "turn") and "txa" in words


@pytest.mark.parametrize("clip", CLIPS, ids=[c.stem for c in CLIPS])
def test_a_file_that_starts_on_a_word_keeps_it(harness, clip):
    [reply] = harness.request(Message("transcribe", payload=clip.read_bytes(), final=True,
                                      audio=AudioFormat("wav")))  # "wav" reads any soundfile container
    assert opens_with_the_tourniquet(reply.data["text"]), reply.data["text"]
    first = reply.data["segments"][0]["words"][0]
    assert first["start_s"] == 0.0  # on the file's clock, not the window's (which begins with a pause)


@pytest.mark.parametrize("clip", CLIPS, ids=[c.stem for c in CLIPS])
def test_a_stream_that_starts_on_a_word_keeps_it(harness, clip):
    audio, rate_hz = soundfile.read(clip, dtype="float32")
    pcm = to_pcm16(np.concatenate([audio, np.zeros(rate_hz, np.float32)]))  # then a second of quiet
    fmt = AudioFormat("pcm_s16le", rate_hz, 1)
    step = 2 * rate_hz // 10
    chunks = [pcm[i:i + step] for i in range(0, len(pcm), step)]
    messages = [Message("stream", id="first-words", payload=c, audio=fmt, final=k == len(chunks) - 1)
                for k, c in enumerate(chunks)]
    finals = [r for r in harness.stream(messages) if r.data.get("partial") is False]
    assert finals and opens_with_the_tourniquet(finals[0].data["text"]), [r.data["text"] for r in finals]
