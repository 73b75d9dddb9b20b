"""The Whisper encoder as a TensorRT engine, built from the cached ONNX export (Jetson: JetPack's TensorRT 10).

The engine takes any window from MIN_FRAMES (1 s) to the full 30 s, optimised
for the full window, which is what `audio_context: full` always sends and the
longest (slowest) case of `auto`. Precision comes from the profile (accel.py):
FP16, with LayerNorm and softmax kept in FP32 on `field`.

Buffers and the stream are torch CUDA tensors and a torch CUDA stream, not
pycuda: the worker already holds torch's CUDA context (the decoder runs in
torch), the encoder's output feeds that decoder on the same device without a
copy through the host, and torch's caching allocator serves both instead of two
allocators splitting the Orin's shared 8 GB. pycuda would add a second context
or a fragile hand-over of torch's primary one, and it does not even install off
the Jetson (source-only; it needs the CUDA toolkit).

Everything is allocated once for the largest window: a pinned host buffer for
the mel (so the upload is a true async DMA), device input and output buffers,
and one stream; a call fills a prefix of each and runs `execute_async_v3`.
Calls are serialised by a lock because transcribe_many encodes from threads.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcccd.kit.accel import EngineError, Precision, load_engine
from tcccd.plugins.whisper.engine.encoders import BackendUnavailable, export_onnx

if TYPE_CHECKING:
    import numpy as np
    import torch

    from tcccd.plugins.whisper.engine.model import AudioEncoder

MIN_FRAMES = 100  # 1 s of mel frames: shorter windows never reach the encoder (the audio context adds 1 s)
MAX_FRAMES = 3000  # Whisper's 30 s window
INPUT, OUTPUT = "mel", "features"


def shape_profile(n_mels: int) -> dict[str, tuple[tuple[int, ...], ...]]:
    return {INPUT: ((1, n_mels, MIN_FRAMES), (1, n_mels, MAX_FRAMES), (1, n_mels, MAX_FRAMES))}


class TensorRTEncoder:
    name = "tensorrt"

    def __init__(self, onnx_file: Path, cache_dir: Path, precision: Precision, n_mels: int,
                 encoder: AudioEncoder | None = None, log: Any = None) -> None:
        """`encoder` (the torch module) is needed only when `onnx_file` is not cached yet."""
        import torch

        if not precision.tensorrt:
            raise BackendUnavailable(f"the {precision.name!r} precision (this profile's) runs without TensorRT")
        if not torch.cuda.is_available():
            raise BackendUnavailable("tensorrt needs a CUDA device and torch sees none")
        try:
            import tensorrt  # noqa: F401 - JetPack's python3-libnvinfer; only probing that it loads
        except ImportError as error:
            raise BackendUnavailable(f"tensorrt is not importable here ({error}); on the Jetson it comes with "
                                     "JetPack (python3-libnvinfer, venv with --system-site-packages)") from None
        if not Path(onnx_file).is_file():
            if encoder is None:
                raise ValueError(f"{onnx_file} is not cached and no torch encoder was given to export")
            export_onnx(encoder, Path(onnx_file))
        self.n_mels = n_mels
        try:
            self.loaded = load_engine(onnx_file, shape_profile(n_mels), precision, cache_dir,
                                      name=f"whisper-encoder-{precision.name}", log=log)
        except EngineError as error:
            raise BackendUnavailable(str(error)) from None
        self.context = self.loaded.engine.create_execution_context()
        self.stream = torch.cuda.Stream()
        output_shape = self.loaded.engine.get_tensor_shape(OUTPUT)  # [1, -1, n_state]: frames are dynamic
        n_state = int(output_shape[len(output_shape) - 1])
        self.host_mel = torch.empty(n_mels * MAX_FRAMES, dtype=torch.float32, pin_memory=True)
        self.device_mel = torch.empty(n_mels * MAX_FRAMES, dtype=torch.float32, device="cuda")
        self.device_features = torch.empty(MAX_FRAMES // 2 * n_state, dtype=torch.float32, device="cuda")
        self.n_state = n_state
        self.lock = threading.Lock()
        for frames in (MAX_FRAMES, MIN_FRAMES):  # warm-up: first-call kernel selection and lazy allocations
            self.encode(torch.zeros(1, n_mels, frames))

    def encode(self, mel: torch.Tensor | np.ndarray) -> torch.Tensor:
        """mel [1, n_mels, frames] float32 (numpy or torch), MIN_FRAMES <= frames <= MAX_FRAMES, even
        -> [1, frames/2, state] on CUDA."""
        import torch

        mel = torch.as_tensor(mel)  # the CPU path hands numpy (mel.py); a GPU caller may hand a CUDA tensor
        frames = int(mel.shape[-1])
        if not MIN_FRAMES <= frames <= MAX_FRAMES or frames % 2 or tuple(mel.shape[:2]) != (1, self.n_mels):
            raise ValueError(f"the tensorrt encoder takes mel [1, {self.n_mels}, frames] with an even frames in "
                             f"{MIN_FRAMES}..{MAX_FRAMES}; got {tuple(mel.shape)}")
        with self.lock:
            return self._run(mel, frames)

    def _run(self, mel: torch.Tensor, frames: int) -> torch.Tensor:
        import torch

        size = self.n_mels * frames
        device_in = self.device_mel[:size].view(1, self.n_mels, frames)
        positions = frames // 2
        device_out = self.device_features[: positions * self.n_state].view(1, positions, self.n_state)
        caller = torch.cuda.current_stream()
        self.stream.wait_stream(caller)  # the mel (if on the GPU) and the last call's copy-out are done first
        with torch.cuda.stream(self.stream):
            if mel.is_cuda:
                device_in.copy_(mel, non_blocking=True)
            else:
                host = self.host_mel[:size].view(1, self.n_mels, frames)
                host.copy_(mel)
                device_in.copy_(host, non_blocking=True)
            self.context.set_input_shape(INPUT, (1, self.n_mels, frames))
            self.context.set_tensor_address(INPUT, device_in.data_ptr())
            self.context.set_tensor_address(OUTPUT, device_out.data_ptr())
            if not self.context.execute_async_v3(self.stream.cuda_stream):
                raise RuntimeError(f"TensorRT could not run the encoder on {frames} frames")
        self.stream.synchronize()  # the pinned host buffer may be refilled by the next call from here on
        return device_out.clone()  # on the caller's stream, where the decoder reads it; the buffer is reused
