"""Input level and clipping, what a medic's kit shows to say "the mic works and is not too hot"."""

from __future__ import annotations

import math

import numpy as np

SILENCE_DBFS = -120.0
CLIP_LEVEL = 0.999  # float32 full scale; a converter that clips sits on it


def dbfs(block: np.ndarray) -> float:
    """RMS level relative to full scale (a full-scale sine is -3 dBFS)."""
    if len(block) == 0:
        return SILENCE_DBFS
    rms = float(np.sqrt(np.mean(np.square(block, dtype=np.float64))))
    return max(SILENCE_DBFS, 20.0 * math.log10(rms)) if rms > 0 else SILENCE_DBFS


class LevelMeter:
    """Level (fast attack, slow release), the last block's peak, and clipped samples since start."""

    def __init__(self, smoothing: float = 0.8) -> None:
        self.smoothing = smoothing
        self.level_dbfs = SILENCE_DBFS
        self.peak_dbfs = SILENCE_DBFS
        self.clipped_samples = 0
        self.clipping = False

    def add(self, block: np.ndarray) -> None:
        level = dbfs(block)
        self.level_dbfs = level if level > self.level_dbfs else (
            self.smoothing * self.level_dbfs + (1 - self.smoothing) * level)
        peak = float(np.max(np.abs(block))) if len(block) else 0.0
        self.peak_dbfs = 20.0 * math.log10(peak) if peak > 0 else SILENCE_DBFS
        clipped = int(np.count_nonzero(np.abs(block) >= CLIP_LEVEL))
        self.clipped_samples += clipped
        self.clipping = clipped > 0

    def health(self) -> dict[str, float | int | bool]:
        return {"input_level_dbfs": round(self.level_dbfs, 1), "input_peak_dbfs": round(self.peak_dbfs, 1),
                "clipping": self.clipping, "clipped_samples": self.clipped_samples}
