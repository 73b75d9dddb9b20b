"""int8 decoder for the CPU: the per-token cost of Whisper tiny.en is reading weights, not arithmetic.

Each decoding step multiplies a handful of rows (1 greedy, 5 beam) by every
decoder weight, above all the 51864 x 384 output projection (80 MB in fp32):
memory bandwidth bound. Measured here, one thread, 5 rows: fp32 F.linear
15 ms, fbgemm dynamic int8 1.4 ms (per-channel weight scales; activations
quantized per row batch at run time). The same weights in int8 also take a
quarter of the memory. By default only the projection is quantized: with the
block Linears in int8 too, WER on the tune split rose from 39.4 % to 44.1 %
(projection only: 41.5 %, held-out unchanged at 60.0 % for all three, engine
alone, beam 5). When blocks are quantized, the cross-attention key/value
projections stay fp32: they run once per window on the encoder output.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tcccd.plugins.whisper.model import TextDecoder


def _int8_linear(weight, bias=None):
    """A dynamic-int8 Linear with per-channel scales, built from an fp32 weight."""
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    linear = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
    with torch.no_grad():
        linear.weight.copy_(weight)
        if bias is not None:
            linear.bias.copy_(bias)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch marks the eager API deprecated; it is the fbgemm kernel we want
        wrapped = quantize_dynamic(torch.nn.Sequential(linear), {torch.nn.Linear: per_channel_dynamic_qconfig})
    return wrapped[0]


def quantize_decoder(decoder: TextDecoder, blocks: bool = False) -> TextDecoder:
    """In place: int8 output projection (and per-step block Linears if `blocks`), fp16 token embedding.

    Only for CPU decoding; the fp32 weights are released as each layer is replaced.
    """
    import torch

    decoder.projection = _int8_linear(decoder.token_embedding.weight.detach())
    for block in decoder.blocks if blocks else ():
        for attention in (block.attn, block.cross_attn):
            names = ("query", "key", "value", "out") if attention is block.attn else ("query", "out")
            for name in names:
                old = getattr(attention, name)
                setattr(attention, name, _int8_linear(old.weight.detach(), old.bias))
        for index in (0, 2):
            old = block.mlp[index]
            block.mlp[index] = _int8_linear(old.weight.detach(), old.bias)
    decoder.token_embedding.weight = torch.nn.Parameter(decoder.token_embedding.weight.detach().half(),
                                                        requires_grad=False)
    return decoder
