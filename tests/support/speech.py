"""Live-stream test audio: long enough for partial transcripts to land beside it."""

from __future__ import annotations

import numpy as np
import soundfile
import soxr

from tests.support.daemon import REPO

ESPEAK = REPO / "tests" / "data" / "espeak-samples"


def two_sentences(first: np.ndarray, rate_hz: int) -> np.ndarray:
    """`first` (int16 mono) then the tourniquet sample at the same rate, as one ~6 s utterance with no pause:
    a partial decodes while it goes on (a sentence said twice would be dropped as a decoding loop)."""
    second, second_rate_hz = soundfile.read(ESPEAK / "tourniquet.wav", dtype="float32")
    second = soxr.resample(second, second_rate_hz, rate_hz)
    parts = [_trimmed(first.astype(np.float32) / 32768), _trimmed(second)]
    return (np.concatenate(parts) * 32767).astype(np.int16)


def _trimmed(audio: np.ndarray, threshold: float = 0.01) -> np.ndarray:
    loud = np.flatnonzero(np.abs(audio) > threshold)
    return audio[loud[0]:loud[-1] + 1]
