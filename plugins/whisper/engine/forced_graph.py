"""One teacher-forced decoder pass that also returns the alignment heads' cross-attention (torch).

Word timestamps come from where the decoder looks in the audio while it reads
each token: openai-whisper picks a few cross-attention heads per model (the
"alignment heads") whose attention follows the speech, and aligns tokens to
audio frames by dynamic time warping over them (word_timing.py). The step
decoder never exposes attention weights (scaled_dot_product_attention fuses
them away), so this pass recomputes cross-attention explicitly and returns the
alignment heads' raw scores q.k / sqrt(d) beside the hidden states.

Used by the torch decoder (torch_steps.py); the torch-free worker's step graph
returns the same scores beside its hidden states (decoder_export.py).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from tcccd.plugins.whisper.engine.model import TextDecoder


class ForcedPass(nn.Module):
    """tokens [1, T] + every layer's cross keys/values -> (hidden [1, T, state], scores [heads, T, positions]).

    `heads` are (layer, head) pairs; their raw attention scores (before softmax) are returned in that order,
    so that the softmax can run over only the positions that hold audio (openai's find_alignment).
    """

    def __init__(self, decoder: TextDecoder, heads: list[tuple[int, int]]) -> None:
        super().__init__()
        self.decoder = decoder
        self.heads = [tuple(h) for h in heads]

    def forward(self, tokens: Tensor, *cross: Tensor) -> tuple[Tensor, Tensor]:
        d = self.decoder
        x = d.token_embedding(tokens).to(d.positional_embedding.dtype)
        x = x + d.positional_embedding[: tokens.shape[1]]
        scores = {}
        for i, block in enumerate(d.blocks):
            h = block.attn_ln(x)
            k, v = block.attn.project_kv(h)
            x = x + block.attn.attend(h, k, v, causal=True)
            out, qk = _cross_attention(block.cross_attn, block.cross_attn_ln(x), cross[2 * i], cross[2 * i + 1])
            x = x + out
            x = x + block.mlp(block.mlp_ln(x))
            for layer, head in self.heads:
                if layer == i:
                    scores[(layer, head)] = qk[0, head]
        return d.ln(x), torch.stack([scores[h] for h in self.heads])


def _cross_attention(attn: nn.Module, x: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """Cross-attention written out, so its raw scores can be read: same numbers as scaled_dot_product_attention."""
    q = attn._heads(attn.query(x))
    qk = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    weights = torch.softmax(qk.float(), dim=-1).to(q.dtype)
    return attn.out((weights @ v).transpose(1, 2).flatten(2)), qk.float()
