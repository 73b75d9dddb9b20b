"""Where the TensorRT encoder cannot run (here: no GPU, no TensorRT), Whisper falls back and says so.

The stand-in `tensorrt` module (tests/support/fake_tensorrt.py) shows that an importable TensorRT is not enough:
without a CUDA device the backend is skipped with that reason, never half-loaded.
"""

from __future__ import annotations

import sys

import pytest
import structlog
import torch

from tcccd.kit.accel import precision_for
from tcccd.kit.plugin import PluginError
from tcccd.kit.testing import PluginHarness
from tcccd.plugins.whisper.engine.transcriber import DecodeOptions, Transcriber
from tests.support.fake_tensorrt import make_module

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="tests the fallback of a machine without CUDA")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("trt-fallback")


@pytest.fixture(scope="module")
def fell_back(cache):
    return Transcriber.load(None, backend="tensorrt", fallback_backends=("onnxruntime", "torch"), cache_dir=cache,
                            threads=2)


def test_tensorrt_falls_back_to_the_next_backend_with_the_reason(fell_back):
    assert fell_back.backend == "onnxruntime"
    [skipped] = fell_back.fallbacks
    assert skipped.skipped == "tensorrt" and "CUDA device" in skipped.reason


def test_the_fallback_transcribes_like_the_reference(fell_back, transcriber, sentence_audio):
    options = DecodeOptions(beam_size=1, temperatures=(0.0,))
    ours = fell_back.transcribe(sentence_audio, options)
    reference = transcriber.transcribe(sentence_audio, options)
    assert [s.tokens for s in ours.segments] == [s.tokens for s in reference.segments]


def test_fallback_to_torch_rebuilds_the_encoder_a_cached_graph_spared(fell_back, transcriber, cache, sentence_audio):
    assert list(cache.glob("whisper-encoder-*.onnx"))  # cached by `fell_back`: the first load builds no encoder
    loaded = Transcriber.load(None, backend="tensorrt", fallback_backends=("torch",), cache_dir=cache, threads=1)
    assert loaded.backend == "torch" and loaded.model.encoder is not None
    options = DecodeOptions(beam_size=1, temperatures=(0.0,))
    expected = [s.tokens for s in transcriber.transcribe(sentence_audio, options).segments]
    assert [s.tokens for s in loaded.transcribe(sentence_audio, options).segments] == expected


def test_importable_tensorrt_without_a_gpu_is_still_skipped(monkeypatch, cache):
    fake = make_module()
    monkeypatch.setitem(sys.modules, "tensorrt", fake)
    loaded = Transcriber.load(None, backend="tensorrt", fallback_backends=("onnxruntime",), cache_dir=cache, threads=1)
    assert loaded.backend == "onnxruntime" and "CUDA device" in loaded.fallbacks[0].reason
    assert fake.calls == []  # nothing was built for a device that is not there


def test_cuda_device_falls_back_to_cpu_when_fallbacks_are_allowed(cache):
    loaded = Transcriber.load(None, backend="tensorrt", device="cuda", fallback_backends=("onnxruntime",),
                              cache_dir=cache, threads=1)
    assert [f.skipped for f in loaded.fallbacks] == ["device cuda", "tensorrt"]
    assert loaded.backend == "onnxruntime" and loaded.model.decoder.positional_embedding.device.type == "cpu"


def test_without_fallbacks_the_failure_is_a_clear_error(cache):
    with pytest.raises(PluginError, match="no Whisper backend could load here: tensorrt: .*CUDA device") as error:
        Transcriber.load(None, backend="tensorrt", cache_dir=cache, threads=1)
    assert error.value.code == "bad_config"


def test_unknown_fallback_is_a_config_error(cache):
    with pytest.raises(PluginError, match="unknown backend 'tensorflow'; accepted: .*tensorrt"):
        Transcriber.load(None, backend="torch", fallback_backends=("tensorflow",), cache_dir=cache, threads=1)


@pytest.mark.slow
def test_the_stage_shows_and_logs_the_fallback(tmp_path, sentence_audio):
    with structlog.testing.capture_logs() as logs, PluginHarness(
            "whisper", {"backend": "tensorrt", "beam_size": 1, "threads": 1}, tmp_path) as harness:
        health = harness.plugin.health()
    assert health["backend"] == "onnxruntime"
    assert len(health["backend_fallbacks"]) == 1 and health["backend_fallbacks"][0].startswith("tensorrt: ")
    warnings = [e for e in logs if e["event"] == "whisper fell back"]
    assert warnings and warnings[0]["skipped"] == "tensorrt" and warnings[0]["using"] == "onnxruntime"


def test_cuda_device_without_fallbacks_is_a_clear_error(cache):
    with pytest.raises(PluginError, match="torch sees no CUDA device; use device 'cpu'") as error:
        Transcriber.load(None, backend="torch", device="cuda", cache_dir=cache, threads=1)
    assert error.value.code == "bad_config"


def test_the_economical_profile_runs_without_tensorrt(monkeypatch, cache):
    monkeypatch.setitem(sys.modules, "tensorrt", make_module())
    loaded = Transcriber.load(None, backend="tensorrt", fallback_backends=("onnxruntime",), cache_dir=cache, threads=1,
                              precision=precision_for("training"))
    assert loaded.backend == "onnxruntime" and "runs without TensorRT" in loaded.fallbacks[0].reason
