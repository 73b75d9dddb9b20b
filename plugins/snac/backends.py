"""Where SNAC codes become samples: torch (CPU, or CUDA in the profile's precision) and ONNX Runtime.

Every backend offers one call, decode(codes) -> samples, on a window's codes
as the stream holds them (7 per frame, whole frames), so the streaming logic
above it never changes. TensorRT is not used for SNAC: its decoder is
convolutions over short windows of variable length, which CUDA FP16 already
runs well, and an engine per window length (or a dynamic profile over 1-20
frames) could not be measured to pay on a GPU from here; the protocol is the
seam where one would go.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .tokens import TOKENS_PER_FRAME, split_codebooks

INPUT_NAMES = ("codes0", "codes1", "codes2")
CODEBOOK_COLUMNS = ((0,), (1, 4), (2, 3, 5, 6))  # which of a frame's 7 codes feed codebooks 0, 1 and 2
CACHED_WINDOW_SIZES = 32  # distinct window lengths whose code buffers are kept (a stream uses a handful)


class DecoderBackend(Protocol):
    name: str

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Float32 mono samples in [-1, 1] for int64 codes of n whole frames (7n): 2048 * n samples."""
        ...

    def prepare(self, frame_counts: list[int]) -> None:
        """Allocate and warm what decoding these window sizes needs, so the first request is not slow."""
        ...


class TorchBackend:
    """The torch module itself: float32 on CPU; on CUDA in `dtype` (the profile's, FP16 by default).

    Codes are populated on the device: a window's flat codes go up in one copy
    (on CUDA from a pinned staging buffer, asynchronously) and the three
    codebooks are gathered there with index_select into buffers cached per
    window length, instead of numpy building three arrays per window and each
    making its own trip to the GPU.
    """

    def __init__(self, module: Any, device: str, threads: int, dtype: str = "float16") -> None:
        import torch

        self._torch = torch
        if device == "cpu":
            torch.set_num_threads(threads)
        self._device = torch.device(device)
        self._cuda = self._device.type == "cuda"
        self._dtype = getattr(torch, dtype) if self._cuda else torch.float32
        self._module = module.to(self._device, self._dtype)
        self._columns = [torch.tensor(c, dtype=torch.int64, device=self._device) for c in CODEBOOK_COLUMNS]
        self._buffers: OrderedDict[int, tuple[Any, list[Any]]] = OrderedDict()
        self._staging = torch.empty(0, dtype=torch.int64, pin_memory=self._cuda)
        self.name = f"torch-{self._device.type}-{str(self._dtype).removeprefix('torch.')}"

    def _window_buffers(self, frames: int) -> tuple[Any, list[Any]]:
        if frames in self._buffers:
            self._buffers.move_to_end(frames)
            return self._buffers[frames]
        torch = self._torch
        flat = torch.empty(frames * TOKENS_PER_FRAME, dtype=torch.int64, device=self._device)
        books = [torch.empty((1, frames * len(c)), dtype=torch.int64, device=self._device) for c in CODEBOOK_COLUMNS]
        self._buffers[frames] = (flat, books)
        if len(self._buffers) > CACHED_WINDOW_SIZES:
            self._buffers.popitem(last=False)
        return flat, books

    def codebooks(self, codes: np.ndarray) -> list[Any]:
        """The three codebooks of these codes, on the device, in this backend's cached buffers."""
        torch = self._torch
        frames = len(codes) // TOKENS_PER_FRAME
        flat, books = self._window_buffers(frames)
        source = torch.from_numpy(np.ascontiguousarray(codes[: frames * TOKENS_PER_FRAME], dtype=np.int64))
        if self._cuda:
            if self._staging.numel() < source.numel():
                self._staging = torch.empty(2 * source.numel(), dtype=torch.int64, pin_memory=True)
            staged = self._staging[: source.numel()]
            staged.copy_(source)
            flat.copy_(staged, non_blocking=True)  # decode ends in a device-to-host copy: staging is free after
        else:
            flat.copy_(source)
        grid = flat.view(frames, TOKENS_PER_FRAME)
        for book, columns in zip(books, self._columns, strict=True):
            torch.index_select(grid, 1, columns, out=book.view(frames, len(columns)))
        return books

    def decode(self, codes: np.ndarray) -> np.ndarray:
        with self._torch.inference_mode():
            audio = self._module(*self.codebooks(codes))
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

    def decode(self, codes: np.ndarray) -> np.ndarray:
        books = split_codebooks(codes)
        feeds = {name: np.ascontiguousarray(c, dtype=np.int64) for name, c in zip(INPUT_NAMES, books, strict=True)}
        return self._session.run(None, feeds)[0][0, 0]

    def prepare(self, frame_counts: list[int]) -> None:
        for frames in frame_counts:
            self.decode(_zero_codes(frames))


def _zero_codes(frames: int) -> np.ndarray:
    return np.zeros(frames * TOKENS_PER_FRAME, np.int64)


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
    example = tuple(torch.from_numpy(c) for c in split_codebooks(_zero_codes(4)))
    tmp = path.with_suffix(".tmp")
    torch.onnx.export(
        module.float().cpu(), example, str(tmp), input_names=list(INPUT_NAMES), output_names=["audio"],
        dynamic_axes={"codes0": {1: "frames"}, "codes1": {1: "frames2"}, "codes2": {1: "frames4"},
                      "audio": {2: "samples"}},
        opset_version=17, dynamo=False,
    )
    tmp.replace(path)
    return path
