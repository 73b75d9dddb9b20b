"""The torch decoder (model.TextDecoder) as a decoding.StepDecoder: numpy tokens in, numpy logits out.

Used by the torch, tensorrt and (where its ONNX decoder cannot run) onnxruntime
backends; the search around it (decoding.py) is numpy. Logits come back as
numpy views of the torch results, so the crossing costs no copy on the CPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from tcccd.plugins.whisper.engine.model import KV, TextDecoder


class TorchSteps:
    def __init__(self, decoder: TextDecoder) -> None:
        self.decoder = decoder
        self.device = decoder.token_embedding.weight.device
        self.n_text_ctx = int(decoder.positional_embedding.shape[0])

    def begin(self, audio: list[KV], tokens: list[int], positions: list[int]) -> tuple[np.ndarray, list[KV]]:
        with torch.inference_mode():
            hidden, cache = self.decoder(torch.tensor([tokens], dtype=torch.long, device=self.device), audio, None)
            return self._numpy(self.decoder.logits(hidden[0, positions])), cache

    def advance(self, audio: list[KV], cache: list[KV], tokens: np.ndarray) -> tuple[np.ndarray, list[KV]]:
        with torch.inference_mode():
            new = torch.from_numpy(tokens).to(self.device)[:, None]
            hidden, cache = self.decoder(new, audio, cache)
            return self._numpy(self.decoder.logits(hidden[:, -1])), cache

    def hidden_states(self, audio: list[KV], tokens: np.ndarray) -> np.ndarray:
        """Teacher forcing: hidden states [n, T, state] of n token rows (right-padded) in one pass, no cache."""
        with torch.inference_mode():
            hidden, _ = self.decoder(torch.from_numpy(tokens).to(self.device), audio, None)
            return hidden.float().cpu().numpy()

    def token_logits(self, hidden: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            weight = self.decoder.positional_embedding
            return self._numpy(self.decoder.logits(torch.from_numpy(hidden).to(weight.device, weight.dtype)))

    def logits_chunks(self, hidden: np.ndarray, rows: int) -> Iterator[np.ndarray]:
        """token_logits(hidden) in one piece: torch's dynamic quantization scales each call's rows together, so
        pieces would change the numbers (the torch decoder is the fallback path; its memory is not bounded)."""
        yield self.token_logits(hidden)

    def aligned(self, audio: list[KV], tokens: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(hidden [T, state], raw scores of the decoder's alignment heads [heads, T, positions])."""
        from tcccd.plugins.whisper.engine.forced_graph import ForcedPass

        with torch.inference_mode():
            cross = [t for kv in audio for t in kv]
            hidden, scores = ForcedPass(self.decoder, list(self.decoder.alignment_heads))(
                torch.tensor([tokens], dtype=torch.long, device=self.device), *cross)
            return hidden[0].float().cpu().numpy(), scores.float().cpu().numpy()

    def expand(self, cache: list[KV], n: int) -> list[KV]:
        return [(k.expand(n, -1, -1, -1), v.expand(n, -1, -1, -1)) for k, v in cache]

    def select(self, cache: list[KV], rows: np.ndarray) -> list[KV]:
        index = torch.from_numpy(rows).to(self.device)
        with torch.inference_mode():
            return [(k.index_select(0, index), v.index_select(0, index)) for k, v in cache]

    @staticmethod
    def _numpy(logits: torch.Tensor) -> np.ndarray:
        return logits.detach().float().cpu().numpy()
