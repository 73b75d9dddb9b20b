"""Loading the configured Whisper backend, or the next one in the fallback list when it cannot run here.

A backend "cannot run here" when it raises BackendUnavailable (no CUDA device,
no TensorRT, an engine build that failed) or ImportError (its package is not
installed); every skipped backend is kept with its reason, so the plugin can
log the fallback and show it in status. Any other error is a real fault and
propagates.

The default, onnxruntime on the CPU with the int8 decoder, loads without torch
(onnx_engine: both halves exported once, in a child process, and cached). The
rest is the torch path:

The torch Whisper (decoder, and the encoder where a backend needs it) is built
once from the model source and shared by every backend tried: a TensorRT
engine that fails to build falls back to onnxruntime without reloading weights.
The source's own tensors are dropped after that build (they would double the
load peak), so a fallback that needs a torch encoder nobody built re-reads
them: a rare path, paid only when the configured backend failed.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcccd.kit.accel import Precision
from tcccd.plugins.whisper.engine.encoders import (
    BACKENDS,
    BackendUnavailable,
    Ct2Engine,
    Ct2WindowEngine,
    OnnxEncoder,
    TorchDecoderEngine,
    TorchEncoder,
    onnx_path,
)


@dataclass(frozen=True)
class Fallback:
    """One backend (or device) that could not be used, and why."""

    skipped: str
    reason: str


def backend_chain(backend: str, fallback_backends: Sequence[str]) -> list[str]:
    """The backends to try, in order, each once; unknown names are a ValueError listing the accepted ones."""
    chain = list(dict.fromkeys([backend, *fallback_backends]))
    unknown = [b for b in chain if b not in BACKENDS]
    if unknown:
        raise ValueError(f"unknown backend {unknown[0]!r}; accepted: {', '.join(BACKENDS)}")
    return chain


def onnx_engine(source: Any, model: str | Path | None, tokenizer: Any, cache_dir: Path, threads: int) -> Any:
    """Encoder and decoder on ONNX Runtime (onnx_decoder.py), exported in a child process when not cached.

    This process reads the weights only to hash them (the cache key) and never imports torch. On success
    the source's tensors are dropped; on failure they are kept for the torch path.
    """
    from tcccd.kit.heap import mmap_large_blocks
    from tcccd.plugins.whisper.engine.onnx_decoder import DecoderFiles, OnnxEngine, OnnxSteps, export_in_child

    encoder_file = onnx_path(cache_dir, source.state, heads_apart=True)
    decoder_files = DecoderFiles.for_state(cache_dir, source.state, source.alignment_heads)
    if not (encoder_file.is_file() and decoder_files.cached()):
        export_in_child(model, cache_dir)
    if not (encoder_file.is_file() and decoder_files.cached()):
        raise BackendUnavailable(f"the ONNX export wrote no {encoder_file.name} or {decoder_files.step.name}")
    steps = OnnxSteps(decoder_files, source.dims["n_text_ctx"], threads)
    engine = OnnxEngine(OnnxEncoder(encoder_file, threads), steps, tokenizer)
    source.state = {}
    mmap_large_blocks()  # the encoder's activations go back to the kernel after each window (tcccd.kit.heap)
    return engine


def usable_device(device: str) -> tuple[str, Fallback | None]:
    """`cuda` where torch sees a CUDA device, else `cpu` with the reason."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        return "cpu", Fallback("device cuda", "torch sees no CUDA device; the decoder runs on cpu")
    return device, None


class BackendLoader:
    def __init__(self, source: Any, reread_source: Callable[[], Any], tokenizer: Any, *, device: str,
                 cache_dir: Path, threads: int, decoder_int8: bool, precision: Precision, log: Any = None) -> None:
        self.source = source
        self.reread_source = reread_source
        self.tokenizer = tokenizer
        self.device = device
        self.cache_dir = Path(cache_dir)
        self.threads = threads
        self.decoder_int8 = decoder_int8
        self.precision = precision
        self.log = log
        # hashed before the state is dropped: onnxruntime's graph (heads apart) and TensorRT's
        self.onnx_files = {"onnxruntime": onnx_path(self.cache_dir, source.state, heads_apart=True),
                           "tensorrt": onnx_path(self.cache_dir, source.state)}
        self.whisper: Any = None

    def first_available(self, chain: Sequence[str]) -> tuple[str, Any, Any, list[Fallback]]:
        """(backend used, window engine, torch Whisper or None, the backends skipped before it)."""
        skipped: list[Fallback] = []
        for backend in chain:
            try:
                engine, whisper = self.load(backend)
            except (BackendUnavailable, ImportError) as error:
                skipped.append(Fallback(backend, str(error)))
                continue
            return backend, engine, whisper, skipped
        raise BackendUnavailable("no Whisper backend could load here: "
                                 + "; ".join(f"{f.skipped}: {f.reason}" for f in skipped))

    def load(self, backend: str) -> tuple[Any, Any]:
        if backend == "ctranslate2":
            if self.source.ct2_dir is None:
                raise BackendUnavailable("ctranslate2 needs a CTranslate2 model directory, and this model is not one")
            ct2 = Ct2Engine(self.source.ct2_dir, self.device, self.threads)
            return Ct2WindowEngine(ct2, self.tokenizer, self.source.dims["n_text_ctx"]), None
        whisper = self._whisper(backend)
        encoder = self._encoder(backend, whisper)
        if backend != "torch":
            whisper.encoder = None  # the ONNX session or TensorRT engine holds its own copy of the weights
        gc.collect()  # the export's graph and the source's buffers are cycles and garbage now
        return TorchDecoderEngine(encoder, whisper.decoder, self.tokenizer), whisper

    def _whisper(self, first_backend: str) -> Any:
        """The torch Whisper, built on first use; with an encoder only where the first backend needs one."""
        if self.whisper is None:
            from tcccd.plugins.whisper.engine.model import build_model
            from tcccd.plugins.whisper.engine.quantize import quantize_decoder

            # A cached ONNX graph holds the encoder: never build its float32 torch copy (~50 MB with the source).
            with_encoder = first_backend not in self.onnx_files or not self.onnx_files[first_backend].is_file()
            quantize = self.decoder_int8 and self.device == "cpu"
            self.whisper = build_model(self.source.dims, self.source.state, self.device, with_encoder=with_encoder,
                                       fp16_embedding=quantize)
            self.whisper.decoder.alignment_heads = self.source.alignment_heads
            self.source.state.clear()  # the module holds its own copy: do not keep both through the rest of the load
            if quantize:
                quantize_decoder(self.whisper.decoder)
            if self.device == "cuda" and not self.precision.fp16:  # build_model's CUDA default is FP16
                self.whisper.float()
        return self.whisper

    def _torch_encoder(self, whisper: Any) -> Any:
        if whisper.encoder is None:
            from tcccd.plugins.whisper.engine.model import build_model

            whisper.encoder = build_model(self.source.dims, self.reread_source().state, self.device,
                                          with_encoder=True).encoder.to(whisper.decoder.positional_embedding.dtype)
        return whisper.encoder

    def _encoder(self, backend: str, whisper: Any) -> Any:
        if backend == "torch":
            return TorchEncoder(self._torch_encoder(whisper), self.threads)
        onnx_file = self.onnx_files[backend]
        to_export = None if onnx_file.is_file() else self._torch_encoder(whisper)  # the graph comes from this module
        if backend == "onnxruntime":
            return OnnxEncoder(onnx_file, self.threads, to_export)
        from tcccd.plugins.whisper.engine.tensorrt_encoder import TensorRTEncoder

        return TensorRTEncoder(onnx_file, self.cache_dir, self.precision, self.source.dims["n_mels"], to_export,
                               self.log)
