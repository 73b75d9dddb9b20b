"""The numpy arithmetic of the search: softmax family, top-k, and seeded draws that torch's generator made.

decoding.py once ran on torch tensors; it runs on numpy now so that the ONNX
engine's worker never imports torch. Temperature fallback samples from a
generator seeded per window (a medical record must be reproducible): the
draws here are the very numbers torch's CPU generator gave for that seed
(mt19937 seeded with init_genrand; a float64 uniform takes two 32-bit outputs,
high word first, keeps 53 bits and scales by 2^-53), so a fallback attempt
picks what it picked before the move. tests/plugins/whisper/engine/test_decoding.py
checks that against torch itself.
"""

from __future__ import annotations

import numpy as np

_MT_WORDS = 624
_MASK_53 = (1 << 53) - 1


class TorchCompatibleRandom:
    """torch.Generator().manual_seed(seed), as far as torch.rand(n, dtype=torch.float64) goes."""

    def __init__(self, seed: int) -> None:
        if not 0 <= seed < 2**32:
            raise ValueError(f"seed {seed} outside 0..2**32-1: torch's mt19937 keeps 32 bits")
        key = np.empty(_MT_WORDS, dtype=np.uint32)
        key[0] = seed
        state = seed
        for i in range(1, _MT_WORDS):  # init_genrand, the seeding torch's mt19937 uses
            state = (1812433253 * (state ^ (state >> 30)) + i) & 0xFFFFFFFF
            key[i] = state
        bits = np.random.MT19937()
        bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _MT_WORDS}}
        self._bits = bits

    def uniform(self, n: int) -> np.ndarray:
        """n float64 in [0, 1), torch.rand's for the same generator state."""
        words = self._bits.random_raw(2 * n).astype(np.uint64)
        values = ((words[0::2] << np.uint64(32)) | words[1::2]) & np.uint64(_MASK_53)
        return values.astype(np.float64) * 2.0**-53


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in the logits' dtype (torch's formula: x - max - log(sum(exp(x - max))))."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def logsumexp(values: np.ndarray) -> np.ndarray:
    """Row-wise log(sum(exp)), -inf for a row that is all -inf (as torch.logsumexp)."""
    peak = values.max(axis=-1)
    finite = np.where(np.isfinite(peak), peak, 0.0).astype(values.dtype)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(values - finite[:, None]).sum(axis=-1)) + finite


def top(values: np.ndarray, count: int, window: float = 8.0) -> tuple[np.ndarray, np.ndarray]:
    """(values, ids) of each row's `count` largest, largest first (torch.topk; ties by lower id).

    Each row's candidates are first narrowed to those within `window` of its maximum (exact whenever at least
    `count` are there, else the whole row is searched): np.argpartition over a 51864-wide row whose timestamp
    rules left most entries at -inf took 3.3 ms, as long as a decoder step's projection. Among values tied at
    the cut, which ids make it is arbitrary, as in torch.topk.
    """
    ids = np.empty((values.shape[0], count), dtype=np.int64)
    for k, row in enumerate(values):
        candidates = np.flatnonzero(row >= row.max() - window)
        if len(candidates) < count:
            candidates = np.arange(len(row))
        if len(candidates) > count:
            candidates = candidates[np.argpartition(-row[candidates], count - 1)[:count]]
        ids[k] = candidates[np.lexsort((candidates, -row[candidates]))]
    return np.take_along_axis(values, ids, axis=-1), ids


def draw(logits: np.ndarray, temperature: float, generator: TorchCompatibleRandom) -> np.ndarray:
    """One token per row from softmax(logits / temperature), by inverting the cumulative distribution.

    Same distribution as torch.multinomial, which measured here 5.6 ms per call on 5 x 51864 logits (a third
    of a fallback attempt); a cumulative sum and one uniform draw per row cost a fraction of a millisecond.
    Tokens at -inf have zero width in the cumulative sum, so they are never drawn.
    """
    probs = softmax(logits.astype(np.float64) / temperature)
    cdf = probs.cumsum(axis=-1)
    u = generator.uniform(logits.shape[0])
    chosen = np.array([np.searchsorted(cdf[k], u[k] * cdf[k, -1], side="right") for k in range(len(u))],
                      dtype=np.int64)
    return np.where(chosen < logits.shape[-1], chosen, probs.argmax(axis=-1))  # rounding at the very top
