"""The TensorRT encoder for real: built from the ONNX export, compared with torch FP32 (wherever TensorRT imports).

TensorRT comes with JetPack on the Jetson; it cannot be installed on the development or lent GPU machines, so
these tests skip there. `make test-gpu` runs them with the `gpu` tests.
"""

from __future__ import annotations

import pytest
import torch

from tcccd.kit.accel import precision_for
from tcccd.plugins.whisper.engine.mel import log_mel_spectrogram
from tcccd.plugins.whisper.engine.transcriber import DecodeOptions, Transcriber

from . import test_cuda

cpu_fp32 = test_cuda.cpu_fp32  # the FP32 CPU reference fixture, shared with the torch CUDA tests

pytest.importorskip("tensorrt")
pytestmark = [pytest.mark.tensorrt, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("trt")


@pytest.fixture(scope="module")
def loaded(cache):
    """One transcriber per profile for the comparisons (each load after the first per profile hits the cache)."""
    memo = {}

    def get(profile):
        if profile not in memo:
            memo[profile] = load(cache, profile)
        return memo[profile]

    return get


def load(cache, profile):
    return Transcriber.load(None, backend="tensorrt", device="cuda", cache_dir=cache, threads=2,
                            precision=precision_for(profile))


@pytest.mark.parametrize("profile", ["field", "emergency"])
@pytest.mark.parametrize("frames", [100, 600, 3000])
def test_engine_features_match_torch_fp32(cpu_fp32, loaded, sentence_audio, profile, frames):
    trt = loaded(profile)
    assert trt.backend == "tensorrt" and not trt.fallbacks
    mel = torch.from_numpy(log_mel_spectrogram(sentence_audio, 80)[:, :frames][None].copy())
    reference = cpu_fp32.engine.encoder.encode(mel)
    ours = trt.engine.encoder.encode(mel).cpu()
    scale = reference.abs().max().item()
    tolerance = 0.05  # torch float16 on CPU: up to 0.018
    assert ours.shape == reference.shape
    assert (ours - reference).abs().max().item() < tolerance * scale


@pytest.mark.parametrize("audio_context", ["auto", "full"])
def test_same_greedy_tokens_as_the_cpu(cpu_fp32, loaded, sentence_audio, audio_context):
    options = DecodeOptions(beam_size=1, temperatures=(0.0,), audio_context=audio_context)
    ours = loaded("field").transcribe(sentence_audio, options)
    reference = cpu_fp32.transcribe(sentence_audio, options)
    assert [s.tokens for s in ours.segments] == [s.tokens for s in reference.segments]


def test_second_load_uses_the_cached_engine_and_a_rebuild_the_timing_cache(cache):
    first = load(cache, "field").engine.encoder.loaded.file
    again = load(cache, "field").engine.encoder.loaded.file
    assert not again.built and again.path == first.path
    again.path.unlink()
    rebuilt = load(cache, "field").engine.encoder.loaded.file
    assert rebuilt.built and rebuilt.timing_cache_entries_reused
