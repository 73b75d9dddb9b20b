"""A compact Whisper in torch, laid out like openai-whisper so its checkpoints load.

Written here rather than imported because the `openai-whisper` package pulls
about 1 GB of triton. Two departures from openai's module make it fast on a
small CPU: the decoder keeps an explicit key/value cache (cross-attention
keys/values computed once per audio, self-attention cache grown per step), and
the encoder accepts fewer than 3000 mel frames, slicing the positional
embedding, so a 4 s utterance need not pay for 30 s of padding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

KV = tuple[Tensor, Tensor]


@dataclass(frozen=True)
class ModelDimensions:
    n_mels: int
    n_audio_ctx: int
    n_audio_state: int
    n_audio_head: int
    n_audio_layer: int
    n_vocab: int
    n_text_ctx: int
    n_text_state: int
    n_text_head: int
    n_text_layer: int


def sinusoids(length: int, channels: int, max_timescale: float = 10000.0) -> Tensor:
    """openai's encoder positional embedding, for checkpoints that do not store it."""
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


class MultiHeadAttention(nn.Module):
    def __init__(self, n_state: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.query = nn.Linear(n_state, n_state)
        self.key = nn.Linear(n_state, n_state, bias=False)
        self.value = nn.Linear(n_state, n_state)
        self.out = nn.Linear(n_state, n_state)

    def _heads(self, x: Tensor) -> Tensor:
        batch, length, state = x.shape
        return x.view(batch, length, self.n_head, state // self.n_head).transpose(1, 2)

    def project_kv(self, x: Tensor) -> KV:
        return self._heads(self.key(x)), self._heads(self.value(x))

    def attend(self, x: Tensor, k: Tensor, v: Tensor, causal: bool, heads_apart: bool = False) -> Tensor:
        """`heads_apart`: one head at a time (same numbers): what the CPU ONNX encoder graph is exported with,
        so that a 30 s window holds one head's 1500 x 1500 scores at once instead of every head's."""
        q = self._heads(self.query(x))
        if heads_apart:
            heads = [F.scaled_dot_product_attention(q[:, i:i + 1], k[:, i:i + 1], v[:, i:i + 1])
                     for i in range(self.n_head)]
            return self.out(torch.cat(heads, dim=1).transpose(1, 2).flatten(2))
        mask = None
        if causal and q.shape[2] > 1:
            offset = k.shape[2] - q.shape[2]
            mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool, device=x.device).tril(offset)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(out.transpose(1, 2).flatten(2))

    def attend_shared(self, x: Tensor, k: Tensor, v: Tensor) -> Tensor:
        """n hypotheses over one audio (k/v with one row): their queries become n x more positions of that row.

        Same result as expanding k/v to n rows, which scaled_dot_product_attention then copied on every
        step; the 45 s file decoded ~10 % faster this way.
        """
        q = self._heads(self.query(x))
        n, heads, length, width = q.shape
        folded = q.transpose(0, 1).reshape(1, heads, n * length, width)
        out = F.scaled_dot_product_attention(folded, k, v)
        return self.out(out.reshape(heads, n, length, width).permute(1, 2, 0, 3).flatten(2))


class ResidualAttentionBlock(nn.Module):
    def __init__(self, n_state: int, n_head: int, cross_attention: bool = False) -> None:
        super().__init__()
        self.attn = MultiHeadAttention(n_state, n_head)
        self.attn_ln = nn.LayerNorm(n_state)
        self.cross_attn = MultiHeadAttention(n_state, n_head) if cross_attention else None
        self.cross_attn_ln = nn.LayerNorm(n_state) if cross_attention else None
        self.mlp = nn.Sequential(nn.Linear(n_state, 4 * n_state), nn.GELU(), nn.Linear(4 * n_state, n_state))
        self.mlp_ln = nn.LayerNorm(n_state)

    def forward(self, x: Tensor, heads_apart: bool = False) -> Tensor:
        """Encoder block: bidirectional self-attention, no cache."""
        h = self.attn_ln(x)
        k, v = self.attn.project_kv(h)
        x = x + self.attn.attend(h, k, v, causal=False, heads_apart=heads_apart)
        return x + self.mlp(self.mlp_ln(x))

    def decode_step(self, x: Tensor, cross_kv: KV, cache: KV | None) -> tuple[Tensor, KV]:
        """Decoder block on new tokens; returns the grown self-attention cache."""
        h = self.attn_ln(x)
        k, v = self.attn.project_kv(h)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        x = x + self.attn.attend(h, k, v, causal=True)
        h = self.cross_attn_ln(x)
        if cross_kv[0].shape[0] == 1 < x.shape[0]:
            x = x + self.cross_attn.attend_shared(h, *cross_kv)
        else:
            x = x + self.cross_attn.attend(h, *cross_kv, causal=False)
        return x + self.mlp(self.mlp_ln(x)), (k, v)


class AudioEncoder(nn.Module):
    def __init__(self, dims: ModelDimensions) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(dims.n_mels, dims.n_audio_state, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(dims.n_audio_state, dims.n_audio_state, kernel_size=3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(dims.n_audio_ctx, dims.n_audio_state))
        self.blocks = nn.ModuleList(ResidualAttentionBlock(dims.n_audio_state, dims.n_audio_head)
                                    for _ in range(dims.n_audio_layer))
        self.ln_post = nn.LayerNorm(dims.n_audio_state)
        self.heads_apart = False  # see MultiHeadAttention.attend; set while exporting the CPU ONNX graph

    def forward(self, mel: Tensor) -> Tensor:
        """mel [batch, n_mels, frames] (frames even, at most 2 x n_audio_ctx) -> [batch, frames / 2, state]."""
        x = F.gelu(self.conv1(mel))
        x = F.gelu(self.conv2(x)).permute(0, 2, 1)
        x = x + self.positional_embedding[: x.shape[1]].to(x.dtype)
        for block in self.blocks:
            x = block(x, self.heads_apart)
        return self.ln_post(x)


class TextDecoder(nn.Module):
    def __init__(self, dims: ModelDimensions) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(dims.n_vocab, dims.n_text_state)
        self.positional_embedding = nn.Parameter(torch.empty(dims.n_text_ctx, dims.n_text_state))
        self.blocks = nn.ModuleList(ResidualAttentionBlock(dims.n_text_state, dims.n_text_head, cross_attention=True)
                                    for _ in range(dims.n_text_layer))
        self.ln = nn.LayerNorm(dims.n_text_state)
        self.projection: nn.Module | None = None  # set by quantize_decoder; None = the tied fp32 embedding
        # (layer, head) pairs whose cross-attention follows the speech (word timestamps); the loader sets the
        # checkpoint's own (convert.ModelSource.alignment_heads)
        self.alignment_heads: tuple[tuple[int, int], ...] = ()

    def cross_kv(self, audio_features: Tensor) -> list[KV]:
        """Cross-attention keys/values: computed once per audio, reused for every token."""
        return [block.cross_attn.project_kv(audio_features) for block in self.blocks]

    def forward(self, tokens: Tensor, cross_kv: list[KV], cache: list[KV] | None) -> tuple[Tensor, list[KV]]:
        """Hidden states of the new tokens [batch, new, state] and the grown cache."""
        offset = 0 if cache is None else cache[0][0].shape[2]
        embedded = self.token_embedding(tokens).to(self.positional_embedding.dtype)
        x = embedded + self.positional_embedding[offset: offset + tokens.shape[1]]
        new_cache = []
        for i, block in enumerate(self.blocks):
            x, layer_cache = block.decode_step(x, cross_kv[i], None if cache is None else cache[i])
            new_cache.append(layer_cache)
        return self.ln(x), new_cache

    def logits(self, hidden: Tensor) -> Tensor:
        """Output projection, tied to the token embedding (as in every Whisper), or its int8 copy."""
        if self.projection is not None:
            return self.projection(hidden).float()
        return F.linear(hidden, self.token_embedding.weight.to(hidden.dtype)).float()


class Whisper(nn.Module):
    def __init__(self, dims: ModelDimensions) -> None:
        super().__init__()
        self.dims = dims
        self.encoder = AudioEncoder(dims)
        self.decoder = TextDecoder(dims)

    @property
    def is_multilingual(self) -> bool:
        return self.dims.n_vocab >= 51865

    def load_weights(self, state: dict[str, Tensor | np.ndarray]) -> None:
        """Load openai-layout weights (any float dtype), widening one tensor at a time; extra buffers are ignored."""
        targets = self.state_dict(keep_vars=True)
        wanted = set(targets) - {"encoder.positional_embedding"}
        missing = sorted(wanted - set(state))
        skipped = {name for name in state if self.encoder is None and name.startswith("encoder.")}
        unexpected = sorted(set(state) - set(targets) - skipped - {"alignment_heads"})
        if missing or unexpected:
            raise ValueError(f"checkpoint does not fit the Whisper layout: missing {missing[:5]}, "
                             f"unexpected {unexpected[:5]}")
        with torch.no_grad():
            for name, target in targets.items():
                value = state.get(name)
                if value is None:
                    continue
                source = torch.as_tensor(value) if isinstance(value, np.ndarray) else value
                if tuple(source.shape) != tuple(target.shape):
                    raise ValueError(f"checkpoint variable {name} has shape {tuple(source.shape)}; "
                                     f"the model needs {tuple(target.shape)}")
                target.copy_(source)


def build_model(dims: dict[str, int], state: dict[str, Tensor | np.ndarray], device: str = "cpu", *,
                with_encoder: bool = True, fp16_embedding: bool = False) -> Whisper:
    """An eval-mode Whisper with the given weights: float32 on CPU, float16 on CUDA.

    Built on the meta device and then given uninitialised storage: random initialisation of 39 M parameters
    would cost time and memory only to be overwritten. Only what will run is materialised: without
    `with_encoder` (an ONNX encoder is cached) the model has no encoder, and `fp16_embedding` keeps the
    51864 x 384 token embedding in float16 (80 MB in float32; the shipped weights are float16 anyway).
    """
    with torch.device("meta"):
        model = Whisper(ModelDimensions(**dims))
        if fp16_embedding:
            model.decoder.token_embedding.to(torch.float16)
    if not with_encoder:
        model.encoder = None
    model.to_empty(device="cpu")
    if with_encoder:
        model.encoder.positional_embedding.copy_(sinusoids(dims["n_audio_ctx"], dims["n_audio_state"]))
    model.load_weights(state)
    model.eval().requires_grad_(False)
    if device == "cuda":
        model = model.to("cuda", torch.float16)
    return model
