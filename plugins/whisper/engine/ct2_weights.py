"""Reading a CTranslate2 Whisper model.bin into openai-whisper-layout torch weights.

The embedded model ships only as a CTranslate2 directory; reading its binary
format directly lets the torch, ONNX and TensorRT backends run exactly the
shipped weights without a hub download or the ctranslate2 package at run time.

Format (ctranslate2 specs/model_spec.py, binary version 6): little-endian;
a string is a uint16 length (NUL included), the bytes and a NUL. Header: uint32
binary version, string spec name, uint32 spec revision, uint32 variable count;
then per variable: string name, uint8 rank, rank x uint32 dims, uint8 dtype id,
uint32 byte count, raw bytes. Aliases (tied weights) follow as name pairs.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np

SUPPORTED_BINARY_VERSION = 6
SUPPORTED_SPEC = "WhisperSpec"
SUPPORTED_SPEC_REVISION = 3
_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
_BFLOAT16_ID = 5


class WeightsFormatError(ValueError):
    """The file is not a CTranslate2 Whisper model this reader understands."""


class _Cursor:
    """Reads the format front to back over the memory-mapped file."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.offset = 0

    def take(self, n_bytes: int, inside: str) -> np.ndarray:
        if self.offset + n_bytes > len(self.data):
            raise WeightsFormatError(f"model.bin ends early{inside} (truncated file?)")
        view = self.data[self.offset: self.offset + n_bytes]
        self.offset += n_bytes
        return view

    def unsigned(self, fmt: str) -> int:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), "").tobytes())[0]

    def string(self) -> str:
        length = self.unsigned("<H")
        return self.take(length, " inside a name").tobytes()[:-1].decode("utf-8")

    def array(self, name: str) -> np.ndarray:
        rank = self.unsigned("<B")
        shape = tuple(self.unsigned("<I") for _ in range(rank))
        dtype_id = self.unsigned("<B")
        raw = self.take(self.unsigned("<I"), f" inside variable {name!r}")
        if dtype_id == _BFLOAT16_ID:
            widened = raw.view(np.uint16).astype(np.uint32) << 16
            return widened.view(np.float32).reshape(shape)
        if dtype_id not in _DTYPES:
            raise WeightsFormatError(f"variable {name!r} has unknown dtype id {dtype_id}")
        return raw.view(_DTYPES[dtype_id]).reshape(shape)


def read_ct2_variables(model_bin: Path) -> dict[str, np.ndarray]:
    """All variables of a model.bin by their CTranslate2 name (aliases resolved).

    The arrays are views of the file mapped copy-on-write (writable, so torch wraps them without a copy or a
    warning): the weights are read from the page cache when used, never copied onto the heap, whose freed
    blocks glibc would keep (the ONNX path only hashes them).
    """
    cursor = _Cursor(np.memmap(model_bin, dtype=np.uint8, mode="c"))
    version = cursor.unsigned("<I")
    if version != SUPPORTED_BINARY_VERSION:
        raise WeightsFormatError(f"{model_bin}: binary version {version}; supported: {SUPPORTED_BINARY_VERSION}")
    spec = cursor.string()
    revision = cursor.unsigned("<I")
    if spec != SUPPORTED_SPEC or revision != SUPPORTED_SPEC_REVISION:
        raise WeightsFormatError(f"{model_bin}: spec {spec!r} revision {revision}; "
                                 f"supported: {SUPPORTED_SPEC!r} revision {SUPPORTED_SPEC_REVISION}")
    variables: dict[str, np.ndarray] = {}
    for _ in range(cursor.unsigned("<I")):
        name = cursor.string()
        variables[name] = cursor.array(name)
    if cursor.offset + 4 <= len(cursor.data):
        for _ in range(cursor.unsigned("<I")):
            alias, target = cursor.string(), cursor.string()
            variables[alias] = variables[target]
    return variables


def _layer_count(variables: dict[str, np.ndarray], prefix: str) -> int:
    pattern = re.compile(rf"^{prefix}/layer_(\d+)/")
    return 1 + max(int(m.group(1)) for name in variables if (m := pattern.match(name)))


def whisper_dims(variables: dict[str, np.ndarray]) -> dict[str, int]:
    """ModelDimensions of openai-whisper, read off the variable shapes."""
    try:
        conv1 = variables["encoder/conv1/weight"]
        return {
            "n_mels": int(conv1.shape[1]),
            "n_audio_ctx": int(variables["encoder/position_encodings/encodings"].shape[0]),
            "n_audio_state": int(conv1.shape[0]),
            "n_audio_head": int(variables["encoder/num_heads"]),
            "n_audio_layer": _layer_count(variables, "encoder"),
            "n_vocab": int(variables["decoder/embeddings/weight"].shape[0]),
            "n_text_ctx": int(variables["decoder/position_encodings/encodings"].shape[0]),
            "n_text_state": int(variables["decoder/embeddings/weight"].shape[1]),
            "n_text_head": int(variables["decoder/num_heads"]),
            "n_text_layer": _layer_count(variables, "decoder"),
        }
    except KeyError as missing:
        raise WeightsFormatError(f"model.bin lacks Whisper variable {missing}") from None


def _split(array: np.ndarray, parts: int) -> list[np.ndarray]:
    return list(np.split(array, parts, axis=0))


def _attention(v: dict[str, np.ndarray], src: str, dst: str, fused: str) -> dict[str, np.ndarray]:
    """openai's query/key/value/out from CT2's fused projections (key has no bias in openai)."""
    out = {}
    if fused == "qkv":
        q_w, k_w, v_w = _split(v[f"{src}/linear_0/weight"], 3)
        q_b, _, v_b = _split(v[f"{src}/linear_0/bias"], 3)
        out_name = f"{src}/linear_1"
    else:
        q_w, q_b = v[f"{src}/linear_0/weight"], v[f"{src}/linear_0/bias"]
        k_w, v_w = _split(v[f"{src}/linear_1/weight"], 2)
        _, v_b = _split(v[f"{src}/linear_1/bias"], 2)
        out_name = f"{src}/linear_2"
    out.update({f"{dst}.query.weight": q_w, f"{dst}.query.bias": q_b, f"{dst}.key.weight": k_w,
                f"{dst}.value.weight": v_w, f"{dst}.value.bias": v_b,
                f"{dst}.out.weight": v[f"{out_name}/weight"], f"{dst}.out.bias": v[f"{out_name}/bias"]})
    return out


def _norm(v: dict[str, np.ndarray], src: str, dst: str) -> dict[str, np.ndarray]:
    return {f"{dst}.weight": v[f"{src}/gamma"], f"{dst}.bias": v[f"{src}/beta"]}


def _block(v: dict[str, np.ndarray], src: str, dst: str, cross: bool) -> dict[str, np.ndarray]:
    out = _attention(v, f"{src}/self_attention", f"{dst}.attn", "qkv")
    out |= _norm(v, f"{src}/self_attention/layer_norm", f"{dst}.attn_ln")
    if cross:
        out |= _attention(v, f"{src}/attention", f"{dst}.cross_attn", "q_kv")
        out |= _norm(v, f"{src}/attention/layer_norm", f"{dst}.cross_attn_ln")
    out |= {f"{dst}.mlp.0.weight": v[f"{src}/ffn/linear_0/weight"], f"{dst}.mlp.0.bias": v[f"{src}/ffn/linear_0/bias"],
            f"{dst}.mlp.2.weight": v[f"{src}/ffn/linear_1/weight"], f"{dst}.mlp.2.bias": v[f"{src}/ffn/linear_1/bias"]}
    out |= _norm(v, f"{src}/ffn/layer_norm", f"{dst}.mlp_ln")
    return out


def openai_state_dict(variables: dict[str, np.ndarray]) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Dims and weights under openai-whisper's module names, in the stored dtype (float16 for the embedded model).

    No float32 copy here: the loader widens tensor by tensor into the module, so the whole model never sits in
    memory twice over in float32.
    """
    dims = whisper_dims(variables)
    v = variables
    state = {
        "encoder.conv1.weight": v["encoder/conv1/weight"], "encoder.conv1.bias": v["encoder/conv1/bias"],
        "encoder.conv2.weight": v["encoder/conv2/weight"], "encoder.conv2.bias": v["encoder/conv2/bias"],
        "encoder.positional_embedding": v["encoder/position_encodings/encodings"],
        "decoder.token_embedding.weight": v["decoder/embeddings/weight"],
        "decoder.positional_embedding": v["decoder/position_encodings/encodings"],
    }
    state |= _norm(v, "encoder/layer_norm", "encoder.ln_post") | _norm(v, "decoder/layer_norm", "decoder.ln")
    for i in range(dims["n_audio_layer"]):
        state |= _block(v, f"encoder/layer_{i}", f"encoder.blocks.{i}", cross=False)
    for i in range(dims["n_text_layer"]):
        state |= _block(v, f"decoder/layer_{i}", f"decoder.blocks.{i}", cross=True)
    return dims, state


def load_ct2_dir(model_dir: Path) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Dims and openai-layout weights of a CTranslate2 Whisper directory."""
    model_bin = Path(model_dir) / "model.bin"
    if not model_bin.is_file():
        raise WeightsFormatError(f"{model_dir} has no model.bin: expected a CTranslate2 Whisper directory "
                                 "(model.bin, config.json, tokenizer.json)")
    return openai_state_dict(read_ct2_variables(model_bin))
