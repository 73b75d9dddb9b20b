"""The piper stage through the same harness the daemon's worker uses, with the embedded voice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcccd.kit.testing import PluginHarness
from tcccd.wire.protocol import Message


@pytest.fixture(scope="module")
def piper(tmp_path_factory: pytest.TempPathFactory):
    with PluginHarness("piper", {"threads": 2}, tmp_path_factory.mktemp("piper")) as harness:
        yield harness


def _speak(harness: PluginHarness, text: object) -> list[Message]:
    return harness.request(Message("speak", data={"text": text}, final=True))


def test_two_sentences_stream_as_chunks_then_a_final(piper: PluginHarness) -> None:
    replies = _speak(piper, "Tourniquet applied. Heart rate one twenty.")
    chunks, final = replies[:-1], replies[-1]
    assert all(m.type == "audio" and not m.final for m in chunks)
    assert final.type == "audio" and final.final
    assert all(m.audio is not None and m.audio.sample_rate_hz == 22050 and m.audio.encoding == "pcm_s16le"
               for m in replies)
    sentences = [m.data["sentence"] for m in chunks]
    assert sentences == sorted(sentences) and set(sentences) == {1, 2}  # the first may come in pieces
    for number in (1, 2):
        pcm = b"".join(m.payload for m in chunks if m.data["sentence"] == number)
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        assert len(samples) > 22050 * 0.5
        assert np.sqrt(np.mean(samples**2)) > 0.02
    total_samples = sum(len(m.payload) // 2 for m in chunks)
    assert final.data["sentences"] == 2
    assert final.data["sample_rate_hz"] == 22050
    assert final.data["duration_s"] == pytest.approx(total_samples / 22050, abs=1e-3)
    assert final.data["first_audio_ms"] > 0


@pytest.mark.parametrize("text", ["", "   \n", None, 42])
def test_empty_or_non_text_is_a_clear_error(piper: PluginHarness, text: object) -> None:
    [reply] = _speak(piper, text)
    assert reply.type == "error" and reply.final
    assert reply.data["code"] == "bad_text"
    assert "non-empty string" in reply.data["message"]


def test_text_over_the_limit_is_refused(tmp_path: Path) -> None:
    with PluginHarness("piper", {"max_text_chars": 20}, tmp_path) as harness:
        [reply] = _speak(harness, "Tourniquet applied to the left thigh.")
    assert reply.type == "error" and reply.data["code"] == "too_long"
    assert "limit is 20" in reply.data["message"]


def test_unknown_voice_is_refused_with_the_loaded_one_named(piper: PluginHarness) -> None:
    [reply] = piper.request(Message("speak", data={"text": "Hello.", "voice": "nobody"}, final=True))
    assert reply.type == "error" and "en_US-joe-medium" in reply.data["message"]


def test_missing_voice_file_fails_setup_clearly(tmp_path: Path) -> None:
    from tcccd.kit.plugin import PluginError

    harness = PluginHarness("piper", {"voice_onnx": str(tmp_path / "none.onnx")}, tmp_path)
    with pytest.raises(PluginError, match="missing"):
        harness.__enter__()
