"""The torch decoder exported once to three ONNX graphs, so that a worker decodes without importing torch.

`cross`: encoder features -> every layer's cross-attention keys (scaled, transposed) and values, once per window.
`step`:  new tokens + self-attention cache + cross keys/values -> hidden states, the alignment heads' raw
         cross-attention scores (q.k / sqrt(d), the numbers forced_graph.py returns: word timestamps) and the
         grown cache, with cross-attention shared by all hypotheses (as model.attend_shared) and the token
         embedding in float16 (build_model's fp16_embedding), as the torch decoder computes them. The
         teacher-forced alignment pass is this graph run on a whole text with an empty cache: one copy of the
         decoder's weights in the worker, not two (a separate alignment graph held ~90 MB more).
`proj`:  the int8 output projection as fbgemm runs it (quantize.py): activations quantized to 7 bits per call
         by onnx_decoder.quantize_rows, MatMulInteger with the per-channel int8 weights, rescaled per column.

Run in a child process (`python -m tcccd.plugins.whisper.engine.decoder_export DIR`) by onnx_decoder.py, so the
worker that needed the export does not keep torch's ~190 MB for the rest of its life either.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import torch
from torch import Tensor, nn

from tcccd.plugins.whisper.engine.encoders import ONNX_OPSET
from tcccd.plugins.whisper.engine.model import TextDecoder
from tcccd.plugins.whisper.engine.onnx_decoder import DecoderFiles


class _Cross(nn.Module):
    """Every layer's cross-attention keys, already scaled by 1/sqrt(head width) and transposed for q @ k
    ([1, heads, width, positions]), and values: done once per window, where the step graph did it again at
    every token (a third of its time went to transposing and scaling the same 1500 keys)."""

    def __init__(self, decoder: TextDecoder) -> None:
        super().__init__()
        self.decoder = decoder

    def forward(self, features: Tensor) -> tuple[Tensor, ...]:
        out = []
        for k, v in self.decoder.cross_kv(features):
            out += [(k * k.shape[-1] ** -0.5).transpose(-1, -2).contiguous(), v]
        return tuple(out)


class _Step(nn.Module):
    """TextDecoder.forward with every hypothesis sharing one row of cross keys/values (any number of them), and
    the alignment heads' raw scores [hyps, heads, new, positions] beside (computed apart: the decode's own
    numbers are those of attend_shared, unchanged)."""

    def __init__(self, decoder: TextDecoder, heads: list[tuple[int, int]]) -> None:
        super().__init__()
        self.decoder = decoder
        self.layers = len(decoder.blocks)
        self.heads = [tuple(h) for h in heads]

    def forward(self, tokens: Tensor, *kv: Tensor) -> tuple[Tensor, ...]:
        cross, cache = kv[: 2 * self.layers], kv[2 * self.layers:]
        d = self.decoder
        offset = cache[0].shape[2]
        x = d.token_embedding(tokens).to(d.positional_embedding.dtype)
        x = x + d.positional_embedding[offset: offset + tokens.shape[1]]
        grown, scores = [], {}
        for i, block in enumerate(d.blocks):
            h = block.attn_ln(x)
            k, v = block.attn.project_kv(h)
            k, v = torch.cat([cache[2 * i], k], dim=2), torch.cat([cache[2 * i + 1], v], dim=2)
            x = x + block.attn.attend(h, k, v, causal=True)  # traced with several new tokens: the causal mask
            attn = block.cross_attn
            q = attn._heads(attn.query(block.cross_attn_ln(x)))  # [hyps, heads, new, width]
            n, heads, length, width = q.shape
            folded = q.transpose(0, 1).reshape(1, heads, n * length, width)  # every hypothesis on one audio row
            qk = folded @ cross[2 * i]  # raw scores q.k / sqrt(width): the keys come scaled and transposed
            for layer, head in self.heads:
                if layer == i:
                    scores[(i, head)] = qk[0, head].reshape(n, length, -1)
            out = torch.softmax(qk, dim=-1) @ cross[2 * i + 1]
            x = x + attn.out(out.reshape(heads, n, length, width).permute(1, 2, 0, 3).flatten(2))
            x = x + block.mlp(block.mlp_ln(x))
            grown += [k, v]
        return (d.ln(x), torch.stack([scores[h] for h in self.heads], dim=1), *grown)


def _names(prefix: str, layers: int) -> list[str]:
    return [f"{prefix}_{kind}{i}" for i in range(layers) for kind in ("k", "v")]


def export_decoder(decoder: TextDecoder, files: DecoderFiles) -> None:
    """Write the graphs beside and rename each into place, the projection's last (it marks completion)."""
    layers, heads = len(decoder.blocks), decoder.blocks[0].attn.n_head
    state = decoder.positional_embedding.shape[1]
    files.step.parent.mkdir(parents=True, exist_ok=True)
    cross_names, cache_names = _names("cross", layers), _names("cache", layers)
    features = torch.zeros(1, 20, state)
    cross = _Cross(decoder)(features)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about shape-dependent slicing: the axes are dynamic
        positions = {n: {3 if n.startswith("cross_k") else 2: "positions"} for n in cross_names}
        _export(_Cross(decoder), (features,), files.cross, ["features"], cross_names,
                {"features": {1: "positions"}, **positions})
        tokens = torch.zeros(2, 3, dtype=torch.long)
        cache = tuple(torch.zeros(2, heads, 2, state // heads) for _ in cache_names)
        dynamic = {"tokens": {0: "hyps", 1: "new"}, **positions,
                   **{n: {0: "hyps", 2: "past"} for n in cache_names},
                   **{f"new_{n}": {0: "hyps", 2: "total"} for n in cache_names}, "hidden": {0: "hyps", 1: "new"},
                   "scores": {0: "hyps", 2: "new", 3: "positions"}}
        _export(_Step(decoder, list(decoder.alignment_heads)), (tokens, *cross, *cache), files.step,
                ["tokens", *cross_names, *cache_names], ["hidden", "scores", *[f"new_{n}" for n in cache_names]],
                dynamic)
    _write_projection(decoder, files.proj)


def _export(module: nn.Module, args: tuple, path: Path, inputs: list[str], outputs: list[str],
            dynamic: dict) -> None:
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.onnx.export(module.eval(), args, str(tmp), input_names=inputs, output_names=outputs,
                      opset_version=ONNX_OPSET, dynamic_axes=dynamic, dynamo=False)
    os.replace(tmp, path)


def _write_projection(decoder: TextDecoder, path: Path) -> None:
    """logits = float(MatMulInteger(x_q, W_int8^T, x_zero)) * scale: the int8 weights and fbgemm's arithmetic."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    if decoder.projection is None:
        raise ValueError("the ONNX decoder runs the int8 projection: quantize the decoder first (quantize.py)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qweight = decoder.projection.weight()
        weight = qweight.int_repr().numpy()
    vocab, width = weight.shape
    graph = helper.make_graph(
        [helper.make_node("Mul", ["weight_scale", "x_scale"], ["scale"]),  # fbgemm's act_times_w_scale, float
         helper.make_node("MatMulInteger", ["x_q", "weight_t", "x_zero"], ["acc"]),
         helper.make_node("Cast", ["acc"], ["acc_f"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["acc_f", "scale"], ["logits"])],
        "int8_projection",
        [helper.make_tensor_value_info("x_q", TensorProto.UINT8, ["rows", width]),
         helper.make_tensor_value_info("x_zero", TensorProto.UINT8, []),
         helper.make_tensor_value_info("x_scale", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["rows", vocab])],
        [numpy_helper.from_array(np.ascontiguousarray(weight.T), "weight_t"),
         numpy_helper.from_array(qweight.q_per_channel_scales().numpy().astype(np.float32), "weight_scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)])
    onnx.checker.check_model(model)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    onnx.save(model, str(tmp))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> None:
    """Child process: read the model, build and quantize the decoder, export its graphs (and the encoder's,
    where it is not cached yet) into the cache directory."""
    from tcccd.plugins.whisper.engine.convert import read_model_source
    from tcccd.plugins.whisper.engine.encoders import export_onnx, onnx_path
    from tcccd.plugins.whisper.engine.model import build_model
    from tcccd.plugins.whisper.engine.quantize import quantize_decoder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="model path; '-' = the embedded tiny.en")
    parser.add_argument("cache_dir", type=Path)
    args = parser.parse_args(argv)
    source = read_model_source(None if args.model == "-" else args.model)
    files = DecoderFiles.for_state(args.cache_dir, source.state, source.alignment_heads)
    encoder_file = onnx_path(args.cache_dir, source.state, heads_apart=True)
    whisper = build_model(source.dims, source.state, with_encoder=not encoder_file.is_file(), fp16_embedding=True)
    whisper.decoder.alignment_heads = source.alignment_heads
    if whisper.encoder is not None:
        export_onnx(whisper.encoder, encoder_file, heads_apart=True)
    export_decoder(quantize_decoder(whisper.decoder), files)


if __name__ == "__main__":
    main()
