"""What the search drives and what may edit its logits: the two interfaces of Whisper decoding.

`StepDecoder` is a decoder numpy in and out, implemented by the torch module
(torch_steps.py) and its ONNX Runtime export (onnx_decoder.py), so the search in
decoding.py runs the same on both and a worker on the ONNX engine never imports
torch. `LogitsProcessor` is a rule applied to every step's logits before a token
is chosen (vocabulary biasing, biasing.py).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class LogitsProcessor(Protocol):
    def __call__(self, tokens: np.ndarray, logits: np.ndarray) -> None:
        """tokens: [n_hyp, seq] int64 numpy (the whole decoder input so far, SOT sequence included);
        logits: [n_hyp, vocab] float32 numpy, modified IN PLACE before the next token is chosen (greedy and beam)."""


class StepDecoder(Protocol):
    """The decoder the search drives, numpy in and out. `audio` is what the engine prepared for one window
    (the cross-attention keys/values); a cache holds every hypothesis' self-attention keys/values."""

    n_text_ctx: int

    def begin(self, audio: Any, tokens: list[int], positions: list[int]) -> tuple[np.ndarray, Any]:
        """The start tokens as one hypothesis: logits [len(positions), vocab] float32 at those positions, cache."""

    def advance(self, audio: Any, cache: Any, tokens: np.ndarray) -> tuple[np.ndarray, Any]:
        """One new token per hypothesis (int64 [n]): their logits [n, vocab] float32 and the grown cache."""

    def expand(self, cache: Any, n: int) -> Any:
        """A one-hypothesis cache as n identical hypotheses."""

    def select(self, cache: Any, rows: np.ndarray) -> Any:
        """The cache of hypotheses `rows` (int64), in that order (beam reordering, ended samples leaving)."""
