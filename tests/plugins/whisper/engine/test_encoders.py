"""The ONNX and ctranslate2 backends agree with torch; the ONNX export is cached."""

from __future__ import annotations

import pytest
import torch

from tcccd.kit.plugin import PluginError
from tcccd.plugins.whisper.engine.transcriber import DecodeOptions, Transcriber
from tests.plugins.whisper.conftest import SENTENCE, word_recall


@pytest.mark.parametrize("audio_context", ["auto", "full"])
def test_onnx_gives_the_same_tokens_as_torch(transcriber, onnx_transcriber, sentence_audio, audio_context):
    options = DecodeOptions(beam_size=1, temperatures=(0.0,), audio_context=audio_context)
    ours = onnx_transcriber.transcribe(sentence_audio, options)
    reference = transcriber.transcribe(sentence_audio, options)
    assert [s.tokens for s in ours.segments] == [s.tokens for s in reference.segments]


def test_onnx_features_match_torch(transcriber, onnx_transcriber):
    mel = torch.randn(1, 80, 600) * 0.5
    ours = onnx_transcriber.engine.encoder.encode(mel)
    with torch.inference_mode():
        reference = transcriber.model.encoder(mel)
    assert (ours - reference).abs().max().item() < 1e-3 * reference.abs().max().item()


def test_export_is_cached_across_loads(onnx_transcriber, onnx_cache):
    files = sorted(onnx_cache.glob("*.onnx"))
    names = [f.name.split("-")[1] for f in files]
    assert names == ["decoder"] * 3 + ["encoder"], names  # the decoder's cross, proj and step graphs (the step
    # graph also gives the alignment heads: no second copy of the weights)
    mtimes = [f.stat().st_mtime_ns for f in files]
    again = Transcriber.load(None, backend="onnxruntime", cache_dir=onnx_cache, threads=2)
    assert again.backend == "onnxruntime" and not again.fallbacks
    assert sorted(onnx_cache.glob("*.onnx")) == files and [f.stat().st_mtime_ns for f in files] == mtimes


@pytest.fixture(scope="module")
def ct2_transcriber(tmp_path_factory):
    pytest.importorskip("ctranslate2")
    return Transcriber.load(None, backend="ctranslate2", cache_dir=tmp_path_factory.mktemp("ct2"), threads=2)


def test_ctranslate2_backend_transcribes(ct2_transcriber, sentence_audio):
    result = ct2_transcriber.transcribe(sentence_audio, DecodeOptions(beam_size=5))
    assert word_recall(SENTENCE, result.text) >= 0.8, result.text
    assert result.segments[0].no_speech_prob < 0.6


def test_ctranslate2_refuses_logits_processors(ct2_transcriber, sentence_audio):
    options = DecodeOptions(logits_processors=(lambda tokens, logits: None,))
    with pytest.raises(PluginError, match="logits_processors"):
        ct2_transcriber.transcribe(sentence_audio, options)


def test_unknown_backend_is_a_clear_error(tmp_path):
    with pytest.raises(PluginError, match="accepted: onnxruntime, torch, ctranslate2"):
        Transcriber.load(None, backend="tensorflow", cache_dir=tmp_path, threads=1)
