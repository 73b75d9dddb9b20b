"""Where SNAC codes become samples: torch (CPU, or CUDA in fp16) and ONNX Runtime.

Every backend offers one call, decode(codes) -> samples, so the streaming logic
above it never changes; a TensorRT engine (a later issue) only has to implement
the same `DecoderBackend` protocol.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Protocol

import numpy as np

Codebooks = tuple[np.ndarray, np.ndarray, np.ndarray]
INPUT_NAMES = ("codes0", "codes1", "codes2")


class DecoderBackend(Protocol):
    name: str

    def decode(self, codes: Codebooks) -> np.ndarray:
        """Float32 mono samples in [-1, 1] for codebooks of shape (1, n), (1, 2n), (1, 4n): 2048 * n samples."""
        ...

    def prepare(self, frame_counts: list[int]) -> None:
        """Allocate and warm what decoding these window sizes needs, so the first request is not slow."""
        ...


class TorchBackend:
    """The torch module itself; on CUDA in fp16, with per-window-size input buffers kept on the device."""

    def __init__(self, module: Any, device: str, threads: int) -> None:
        import torch

        self._torch = torch
        if device == "cpu":
            torch.set_num_threads(threads)
        self._device = torch.device(device)
        self._dtype = torch.float16 if self._device.type == "cuda" else torch.float32
        self._module = module.to(self._device, self._dtype)
        self._buffers: dict[int, tuple[Any, Any, Any]] = {}
        self.name = f"torch-{self._device.type}-{str(self._dtype).removeprefix('torch.')}"

    def _inputs(self, codes: Codebooks) -> tuple[Any, Any, Any]:
        frames = codes[0].shape[1]
        if frames not in self._buffers:
            self._buffers[frames] = tuple(  # type: ignore[assignment]
                self._torch.empty(c.shape, dtype=self._torch.int64, device=self._device) for c in codes)
        buffers = self._buffers[frames]
        for buf, c in zip(buffers, codes, strict=True):
            buf.copy_(self._torch.from_numpy(np.ascontiguousarray(c)), non_blocking=False)
        return buffers

    def decode(self, codes: Codebooks) -> np.ndarray:
        with self._torch.inference_mode():
            audio = self._module(*self._inputs(codes))
        return audio[0, 0].float().cpu().numpy()

    def prepare(self, frame_counts: list[int]) -> None:
        for frames in frame_counts:
            self.decode(_zero_codes(frames))


class OnnxBackend:
    """ONNX Runtime on a graph exported once per checkpoint into the cache directory."""

    def __init__(self, module: Any, weights_file: Path, cache_dir: Path, threads: int, noise: bool,
                 providers: list[str]) -> None:
        import onnxruntime

        path = _export_once(module, weights_file, cache_dir, noise)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(path), options, providers=providers)
        self.name = f"onnxruntime-{self._session.get_providers()[0]}"

    def decode(self, codes: Codebooks) -> np.ndarray:
        feeds = {name: np.ascontiguousarray(c, dtype=np.int64) for name, c in zip(INPUT_NAMES, codes, strict=True)}
        return self._session.run(None, feeds)[0][0, 0]

    def prepare(self, frame_counts: list[int]) -> None:
        for frames in frame_counts:
            self.decode(_zero_codes(frames))


def _zero_codes(frames: int) -> Codebooks:
    return (np.zeros((1, frames), np.int64), np.zeros((1, 2 * frames), np.int64), np.zeros((1, 4 * frames), np.int64))


def _export_once(module: Any, weights_file: Path, cache_dir: Path, noise: bool) -> Path:
    """Export keyed by the checkpoint's content, so a new checkpoint never reuses a stale graph."""
    import torch

    digest = hashlib.sha256()
    with weights_file.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    path = cache_dir / f"snac-decoder-{digest.hexdigest()[:16]}-noise{int(noise)}.onnx"
    if path.is_file():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    example = tuple(torch.from_numpy(c) for c in _zero_codes(4))
    tmp = path.with_suffix(".tmp")
    torch.onnx.export(
        module.float().cpu(), example, str(tmp), input_names=list(INPUT_NAMES), output_names=["audio"],
        dynamic_axes={"codes0": {1: "frames"}, "codes1": {1: "frames2"}, "codes2": {1: "frames4"},
                      "audio": {2: "samples"}},
        opset_version=17, dynamo=False,
    )
    tmp.replace(path)
    return path
