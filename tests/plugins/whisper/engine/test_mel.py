"""The padding-skipping front end equals openai's straightforward log_mel_spectrogram."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tcccd.plugins.whisper.engine.mel import N_SAMPLES, log_mel_spectrogram, mel_filters


def openai_reference(audio: np.ndarray, n_mels: int, dtype: torch.dtype = torch.float64) -> np.ndarray:
    """openai-whisper's algorithm as written there (torch): STFT over audio + 30 s of zeros.

    In float64 by default: openai's float32 STFT itself is 2.6e-5 off a float64 one after the log on a quiet tone.
    """
    padded = torch.nn.functional.pad(torch.from_numpy(audio).to(dtype), (0, N_SAMPLES))
    stft = torch.stft(padded, 400, 160, window=torch.hann_window(400, dtype=dtype), return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2
    log_spec = torch.clamp(torch.from_numpy(mel_filters(n_mels)).to(dtype) @ magnitudes, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).float().numpy()


@pytest.mark.parametrize("n_samples", [0, 150, 64000, 64123, 480000, 500001])
@pytest.mark.parametrize("n_mels", [80, 128])
def test_matches_the_full_padded_reference(n_samples, n_mels):
    audio = (np.random.default_rng(n_samples).standard_normal(n_samples) * 0.1).astype(np.float32)
    expected = openai_reference(audio, n_mels)
    ours = log_mel_spectrogram(audio, n_mels)
    assert isinstance(ours, np.ndarray) and ours.dtype == np.float32
    assert ours.shape == expected.shape
    assert np.abs(ours - expected).max() < 1e-5


def test_quiet_speech_like_tone_matches(tmp_path):
    t = np.arange(40000) / 16000
    audio = (0.01 * np.sin(2 * np.pi * 220 * t) * np.sin(2 * np.pi * 3 * t)).astype(np.float32)
    ours = log_mel_spectrogram(audio, 80)
    assert np.abs(ours - openai_reference(audio, 80)).max() < 1e-5
    assert np.abs(ours - openai_reference(audio, 80, torch.float32)).max() < 5e-5  # openai's own float32 error


@pytest.mark.parametrize("n_mels", [80, 128])
def test_filters_equal_librosa_slaney_as_faster_whisper_computes_them(n_mels):
    feature_extractor = pytest.importorskip("faster_whisper.feature_extractor")
    theirs = feature_extractor.FeatureExtractor.get_mel_filters(16000, 400, n_mels)
    assert np.abs(mel_filters(n_mels) - theirs).max() < 1e-7
