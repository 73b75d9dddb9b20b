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
    from tcccd.plugins.whisper.engine.model import TextDecoder


ROWS_PER_CHUNK = 4096  # rows widened to float32 at a time: 6 MB for tiny.en's 384 columns


def _int8_linear(weight, bias=None):
    """A dynamic-int8 Linear with symmetric per-channel scales, built straight from an fp32 or fp16 weight.

    Built directly (not through quantize_dynamic on an fp32 nn.Linear): that path deep-copies a freshly
    initialised float module, which for the 51864 x 384 projection cost 160 MB of peak memory at load.
    Quantized a block of rows at a time, so an fp16 weight is never widened whole (80 MB for the projection).
    """
    import torch
    from torch.ao.nn.quantized.dynamic import Linear

    weight = weight.detach()
    rows = weight.shape[0]
    scales = torch.empty(rows, dtype=torch.float64)
    int_values = torch.empty(weight.shape, dtype=torch.int8)
    zero_points = torch.zeros(rows, dtype=torch.long)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch marks quantized tensors deprecated; the fbgemm kernel is what we want
        for start in range(0, rows, ROWS_PER_CHUNK):
            block = weight[start: start + ROWS_PER_CHUNK].float()
            block_scales = (torch.maximum(block.amax(dim=1), -block.amin(dim=1)) / 127.5).clamp(min=1e-8).double()
            quantized = torch.quantize_per_channel(block, block_scales, zero_points[: block.shape[0]], axis=0,
                                                   dtype=torch.qint8)
            int_values[start: start + block.shape[0]] = quantized.int_repr()
            scales[start: start + block.shape[0]] = block_scales
        qweight = torch._make_per_channel_quantized_tensor(int_values, scales, zero_points, 0)
        linear = Linear(weight.shape[1], weight.shape[0], bias_=bias is not None, dtype=torch.qint8)
        linear.set_weight_bias(qweight, None if bias is None else bias.detach().float())
    return linear


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
    if decoder.token_embedding.weight.dtype != torch.float16:  # build_model(fp16_embedding=True) did it already
        decoder.token_embedding.weight = torch.nn.Parameter(decoder.token_embedding.weight.detach().half(),
                                                            requires_grad=False)
    return decoder
