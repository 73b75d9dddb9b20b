"""Encoder backends behind one small interface.

`torch`, `onnxruntime` and `tensorrt` (tensorrt_encoder.py, GPU only) run our
own module on the shipped weights and hand the features to the torch decoder;
on the CPU the onnxruntime encoder feeds the decoder's own ONNX graphs instead
(onnx_decoder.py), and torch stays out of the process.
`ctranslate2` is a whole-model alternative (faster-whisper's engine): it
encodes and decodes itself, see Ct2Engine below. Which one loads, and the
fallbacks when it cannot, is backend_loader.py's.
The ONNX graph is exported once per weights+settings and cached, because an
export costs seconds and the daemon restarts workers.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from tcccd.plugins.whisper.engine.decoding import (
    DecodeOptions,
    WindowResult,
    compression_ratio,
    decode_window,
    initial_tokens,
    is_repetitive,
)
from tcccd.plugins.whisper.engine.tokenizer import Tokenizer

if TYPE_CHECKING:
    import torch

    from tcccd.plugins.whisper.engine.model import AudioEncoder

ONNX_OPSET = 17
EXPORT_SETTINGS = f"encoder-fp32-dynamic-frames-opset{ONNX_OPSET}-v2"
BACKENDS = ("onnxruntime", "torch", "ctranslate2", "tensorrt")


class BackendUnavailable(RuntimeError):
    """This backend cannot run on this machine (no GPU, no TensorRT, a failed engine build): try the next one."""


def cpu_session(path: Path, options: Any) -> Any:
    """An ONNX Runtime CPU session of an exported graph; a runtime that cannot load it (one older than the onnx
    that wrote it: "Unsupported model IR version", seen with onnx 1.23 beside onnxruntime 1.30) is a backend that
    cannot run here, said with the reason, not a crash."""
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidGraph, InvalidProtobuf

    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except (Fail, InvalidGraph, InvalidProtobuf) as exc:
        reason = str(exc).strip().splitlines()[-1][-240:]
        raise BackendUnavailable(f"onnxruntime {ort.__version__} cannot load {Path(path).name}: {reason}") from None


class EncoderBackend(Protocol):
    name: str

    def encode(self, mel: torch.Tensor) -> torch.Tensor:
        """mel [1, n_mels, frames] float32 (frames even, <= 3000) -> features [1, frames / 2, state] float32."""


class TorchEncoder:
    """Eager torch: fp32 on CPU, fp16 on CUDA (the module must already sit on that device and dtype)."""

    name = "torch"

    def __init__(self, encoder: AudioEncoder, threads: int = 1) -> None:
        self.encoder = encoder
        self.threads = threads
        self.parameter = next(encoder.parameters())
        # torch's thread count is process-wide: two encodes interleaving set/restore would leave it at `threads`
        self.lock = threading.Lock()

    def encode(self, mel: Any) -> torch.Tensor:
        """mel: numpy or torch. Runs on `threads` torch threads, then gives the process back its setting (the
        decoder's)."""
        import torch

        mel = torch.as_tensor(mel)
        with self.lock:
            previous = torch.get_num_threads()
            torch.set_num_threads(self.threads)
            try:
                with torch.inference_mode():
                    return self.encoder(mel.to(self.parameter.device, self.parameter.dtype))
            finally:
                torch.set_num_threads(previous)


def onnx_path(cache_dir: Path, state: dict[str, Any], heads_apart: bool = False) -> Path:
    """The cached graph for these weights: keyed by a hash of the encoder's source weights as stored.

    Hashing the source (names, dtypes, shapes, bytes) rather than a built module lets a cache hit skip
    building the float32 torch encoder at all; new weights never meet a stale graph. `heads_apart`: the
    onnxruntime CPU graph (attention one head at a time, see export_onnx); TensorRT keeps the fused layout.
    """
    settings = EXPORT_SETTINGS + ("-heads-apart" if heads_apart else "")
    return Path(cache_dir) / f"whisper-encoder-{weights_digest(state, 'encoder.', settings)}.onnx"


def weights_digest(state: dict[str, Any], prefix: str, settings: str) -> str:
    """24 hex digits of sha256 over `settings` and the `prefix` weights (name, dtype, shape, bytes), in name order."""
    digest = hashlib.sha256(settings.encode())
    for name in sorted(k for k in state if k.startswith(prefix)):
        value = state[name]
        array = value if isinstance(value, np.ndarray) else value.detach().cpu().contiguous().view(-1).view(
            dtype=_same_width_int(value.dtype)).numpy()
        digest.update(f"{name}:{array.dtype}:{tuple(value.shape)}".encode())
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()[:24]


def _same_width_int(dtype: Any) -> Any:
    """Raw bits of a torch tensor (bfloat16 has no numpy type): view it as an integer of the same width."""
    import torch

    return {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[dtype.itemsize]


def export_onnx(encoder: AudioEncoder, path: Path, heads_apart: bool = False) -> None:
    """Export with a dynamic frame axis, written beside and renamed so a crash leaves no half file.

    `heads_apart` (onnxruntime on the CPU): attention computed one head at a time, each head's 1500 x 1500
    scores freed before the next; the features are bit for bit the same, and a 30 s window's activations
    peaked at +20 MB instead of +100 MB (with worker_heap's mmap threshold; without it the heap kept ~170 MB).
    """
    import torch

    n_mels = encoder.conv1.in_channels
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    encoder.heads_apart = heads_apart
    try:
        with torch.no_grad():
            torch.onnx.export(encoder.float().cpu().eval(), (torch.zeros(1, n_mels, 800),), str(tmp),
                              input_names=["mel"], output_names=["features"], opset_version=ONNX_OPSET,
                              dynamic_axes={"mel": {2: "frames"}, "features": {1: "positions"}}, dynamo=False)
    finally:
        encoder.heads_apart = False
    os.replace(tmp, path)


class OnnxEncoder:
    """onnxruntime on CPU; `exported` tells whether this load had to export (False = cache hit)."""

    name = "onnxruntime"

    def __init__(self, path: Path, threads: int, encoder: AudioEncoder | None = None) -> None:
        """`path`: onnx_path(..., heads_apart=True); `encoder` (the torch module) is needed only when it is not
        cached yet."""
        import onnxruntime as ort

        self.path = Path(path)
        self.exported = not self.path.is_file()
        if self.exported:
            if encoder is None:
                raise ValueError(f"{self.path} is not cached and no torch encoder was given to export")
            export_onnx(encoder, self.path, heads_apart=True)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False  # the arena kept each window size's buffers: +18 MB on the 45 s file
        # torch shares this process: spinning ORT threads would steal its cores (measured: both slow down).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = cpu_session(self.path, options)
        # One encode at a time: a 30 s window's activations peak ~200 MB above the weights (its attention
        # scores alone are 6 x 1500 x 1500 floats per layer), and two side by side already share all the cores.
        self.lock = threading.Lock()

    def features(self, mel: Any) -> np.ndarray:
        """mel [1, n_mels, frames] (numpy or torch) -> features [1, frames / 2, state] float32 numpy."""
        with self.lock:
            return self.session.run(["features"], {"mel": _float32_numpy(mel)})[0]

    def encode(self, mel: Any) -> torch.Tensor:
        import torch

        return torch.from_numpy(self.features(mel))


def _float32_numpy(mel: Any) -> np.ndarray:
    """A numpy or torch mel as a float32 numpy array on the CPU."""
    if hasattr(mel, "detach"):
        mel = mel.detach().float().cpu().numpy()
    return np.ascontiguousarray(mel, dtype=np.float32)


class Ct2Engine:
    """CTranslate2 as a whole model: encoder and decoder (its own beam search and rules).

    DecodeOptions map onto ctranslate2's generate as: beam_size -> beam_size
    (temperature 0) or num_hypotheses (sampling), temperature -> sampling_temperature
    with top-k 0, suppress_blank, suppress_tokens (None -> [-1], the config.json
    set), prompt and without_timestamps through the prompt tokens. What does not
    map: logits_processors (ctranslate2 exposes no per-step hook for Whisper;
    refused with an error rather than silently ignored) and the cap on
    timestamps past the encoded audio. avg_logprob is rebuilt from its scores
    as faster-whisper does.
    """

    name = "ctranslate2"

    def __init__(self, model_dir: Path, device: str, threads: int) -> None:
        import ctranslate2

        compute_type = "float16" if device == "cuda" else "int8"
        self.model = ctranslate2.models.Whisper(str(model_dir), device=device, compute_type=compute_type,
                                                intra_threads=threads)

    def encode(self, mel: torch.Tensor) -> object:
        import ctranslate2

        features = ctranslate2.StorageView.from_array(_float32_numpy(mel))
        return self.model.encode(features, to_cpu=False)

    def generate(self, encoded: object, start_tokens: list[int], beam_size: int, temperature: float,
                 suppress_blank: bool, suppress_tokens: list[int], max_length: int) -> tuple[list[int], float, float]:
        """(tokens without eot, sum of logprobs, no-speech probability) of the best hypothesis."""
        sampling = temperature > 0
        result = self.model.generate(
            encoded, [start_tokens], beam_size=1 if sampling else max(1, beam_size),
            num_hypotheses=max(1, beam_size) if sampling else 1, length_penalty=1.0, max_length=max_length,
            return_scores=True, return_no_speech_prob=True, suppress_blank=suppress_blank,
            suppress_tokens=suppress_tokens, sampling_topk=0 if sampling else 1,
            sampling_temperature=temperature if sampling else 1.0)[0]
        tokens = list(result.sequences_ids[0])
        sum_logprob = result.scores[0] * len(tokens)
        return tokens, sum_logprob, result.no_speech_prob


class TorchDecoderEngine:
    """An encoder backend (torch, onnxruntime or tensorrt) feeding our torch decoder."""

    def __init__(self, encoder: Any, decoder: Any, tokenizer: Tokenizer) -> None:
        from tcccd.plugins.whisper.engine.torch_steps import TorchSteps

        self.encoder = encoder
        self.decoder = decoder
        self.steps = TorchSteps(decoder)
        self.tokenizer = tokenizer

    def prepare(self, mel: Any) -> Any:
        """mel: numpy [1, n_mels, frames] (mel.py's) or a torch tensor."""
        import torch

        features = self.encoder.encode(torch.as_tensor(mel))
        weight = self.decoder.positional_embedding  # its dtype is the compute dtype (the embedding may be fp16)
        with torch.inference_mode():
            return self.decoder.cross_kv(features.to(weight.device, weight.dtype))

    def decode(self, cross_kv: Any, options: DecodeOptions, temperature: float, prompt: list[int],
               suppress: tuple[int, ...], max_timestamp_index: int) -> WindowResult:
        return decode_window(self.steps, cross_kv, self.tokenizer, options, temperature, prompt, suppress,
                             max_timestamp_index)


class Ct2WindowEngine:
    """ctranslate2 doing both halves; see encoders.Ct2Engine for what maps and what does not."""

    def __init__(self, ct2: Any, tokenizer: Tokenizer, n_text_ctx: int) -> None:
        self.ct2 = ct2
        self.tokenizer = tokenizer
        self.n_text_ctx = n_text_ctx

    def prepare(self, mel: Any) -> Any:
        return self.ct2.encode(mel)

    def decode(self, encoded: Any, options: DecodeOptions, temperature: float, prompt: list[int],
               suppress: tuple[int, ...], max_timestamp_index: int) -> WindowResult:
        start = initial_tokens(self.tokenizer, options, prompt, self.n_text_ctx)
        suppress_tokens = list(options.suppress_tokens) if options.suppress_tokens is not None else [-1]
        tokens, sum_lp, no_speech = self.ct2.generate(encoded, start, options.beam_size, temperature,
                                                      options.suppress_blank, suppress_tokens,
                                                      self.n_text_ctx // 2)
        text = self.tokenizer.decode(tokens)
        return WindowResult(tokens=tokens, text=text, avg_logprob=sum_lp / (len(tokens) + 1),
                            no_speech_prob=no_speech, temperature=temperature,
                            compression_ratio=compression_ratio(text),
                            repetitive=is_repetitive(tokens, text, self.tokenizer.eot))
