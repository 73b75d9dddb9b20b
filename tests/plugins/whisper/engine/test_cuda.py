"""Whisper on the GPU with torch: encoder and decoder in FP16 against FP32 on the CPU (`make test-gpu`)."""

from __future__ import annotations

import pytest
import torch

from tcccd.plugins.whisper.engine.mel import log_mel_spectrogram
from tcccd.plugins.whisper.engine.transcriber import DecodeOptions, Transcriber

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.fixture(scope="module")
def cpu_fp32(tmp_path_factory):
    return Transcriber.load(None, backend="torch", cache_dir=tmp_path_factory.mktemp("cpu"), threads=2,
                            decoder_int8=False)


@pytest.fixture(scope="module")
def cuda_fp16(tmp_path_factory):
    return Transcriber.load(None, backend="torch", device="cuda", cache_dir=tmp_path_factory.mktemp("cuda"),
                            threads=2)


def test_encoder_fp16_within_fp16_tolerance(cpu_fp32, cuda_fp16, sentence_audio):
    mel = torch.from_numpy(log_mel_spectrogram(sentence_audio, 80)[:, :3000][None].copy())
    reference = cpu_fp32.engine.encoder.encode(mel)
    ours = cuda_fp16.engine.encoder.encode(mel).float().cpu()
    assert cuda_fp16.engine.encoder.parameter.dtype == torch.float16
    scale = reference.abs().max().item()
    assert (ours - reference).abs().max().item() < 0.05 * scale  # CPU float16 emulation: up to 0.018
    assert (ours - reference).abs().mean().item() < 0.002 * scale


def test_same_greedy_tokens_as_the_cpu(cpu_fp32, cuda_fp16, sentence_audio):
    for audio_context in ("auto", "full"):
        options = DecodeOptions(beam_size=1, temperatures=(0.0,), audio_context=audio_context)
        ours = cuda_fp16.transcribe(sentence_audio, options)
        assert ours.text, audio_context
        expected = [s.tokens for s in cpu_fp32.transcribe(sentence_audio, options).segments]
        assert [s.tokens for s in ours.segments] == expected, audio_context


def test_training_profile_runs_fp32_on_cuda(cpu_fp32, sentence_audio, tmp_path):
    from tcccd.kit.accel import precision_for

    fp32 = Transcriber.load(None, backend="torch", device="cuda", cache_dir=tmp_path, threads=2,
                            precision=precision_for("training"))
    assert fp32.engine.encoder.parameter.dtype == torch.float32
    mel = torch.from_numpy(log_mel_spectrogram(sentence_audio, 80)[:, :600][None].copy())
    reference = cpu_fp32.engine.encoder.encode(mel)
    ours = fp32.engine.encoder.encode(mel).cpu()
    assert (ours - reference).abs().max().item() < 5e-3 * reference.abs().max().item()  # cuDNN convs may use TF32
