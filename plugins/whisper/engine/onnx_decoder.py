"""The Whisper decoder on ONNX Runtime, driven by decoding.py's numpy search: a worker without torch.

The torch decoder (model.py + quantize.py) is exported once per weights and
settings (decoder_export.py, in a child process) and cached beside the encoder
graph, keyed the same way: a hash of the decoder's source weights. With both
graphs cached, loading reads no torch at all: the ASR worker's steady state
drops torch's ~190 MB and the torch module's own copies of the weights.

The int8 output projection reproduces fbgemm's dynamic quantization (what
torch's quantized Linear runs): the rows of one call share an unsigned 7-bit
activation scale and zero point chosen as torch's ChooseQuantizationParams
does, the weights are quantized per output channel, and the integer products
are rescaled by activation scale x channel scale.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tcccd.plugins.whisper.engine.decoding import DecodeOptions, WindowResult, decode_window
from tcccd.plugins.whisper.engine.encoders import ONNX_OPSET, BackendUnavailable, cpu_session, weights_digest
from tcccd.plugins.whisper.engine.tokenizer import Tokenizer

DECODER_EXPORT_SETTINGS = f"decoder-step-scores-crosskt-int8proj-fbgemm7bit-opset{ONNX_OPSET}-v3"
EXPORT_TIMEOUT_S = 300  # ~20 s here; under the default start_timeout_s (600) of the stage waiting for it
ACTIVATION_QMAX = 127  # fbgemm's reduce_range: 7-bit activations, so u8 x s8 pairs never saturate int16
SMALL_SCALE = 6.1e-5  # torch's SMALL_SCALE_THRESHOLD


@dataclass(frozen=True)
class DecoderFiles:
    step: Path  # also returns the alignment heads' scores: keyed by the heads as well as the weights
    cross: Path
    proj: Path

    @classmethod
    def for_state(cls, cache_dir: Path, state: dict[str, Any],
                  alignment_heads: Sequence[Sequence[int]]) -> DecoderFiles:
        base = Path(cache_dir) / f"whisper-decoder-{weights_digest(state, 'decoder.', DECODER_EXPORT_SETTINGS)}"
        heads = hashlib.sha256(f"{[tuple(h) for h in alignment_heads]}".encode()).hexdigest()
        return cls(base.with_suffix(f".step-{heads[:12]}.onnx"), base.with_suffix(".cross.onnx"),
                   base.with_suffix(".proj.onnx"))

    def cached(self) -> bool:
        return all(p.is_file() for p in (self.step, self.cross, self.proj))


def export_in_child(model: str | Path | None, cache_dir: Path) -> None:
    """Run decoder_export.py (and the encoder's export) in a child, so this process never imports torch."""
    command = [sys.executable, "-m", "tcccd.plugins.whisper.engine.decoder_export",
               "-" if model is None else str(model), str(cache_dir)]
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S)
    except subprocess.CalledProcessError as error:
        tail = (error.stderr or "").strip().splitlines()[-3:]
        raise BackendUnavailable(f"the ONNX decoder export failed: {' | '.join(tail)}") from None
    except subprocess.TimeoutExpired:
        raise BackendUnavailable(f"the ONNX decoder export took over {EXPORT_TIMEOUT_S} s") from None


def quantize_rows(x: np.ndarray) -> tuple[np.ndarray, np.uint8, np.float32]:
    """x [rows, width] float32 -> (uint8 values, zero point, scale) as fbgemm's dynamic Linear quantizes it."""
    low, high = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = (high - low) / ACTIVATION_QMAX
    if np.float32(scale) == 0 or np.isinf(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    if scale < SMALL_SCALE:
        low, high = _widened(low, high, scale)
        scale = SMALL_SCALE
    from_min, from_max = 0 - low / scale, ACTIVATION_QMAX - high / scale
    from_min_error, from_max_error = 0 - abs(low / scale), ACTIVATION_QMAX - abs(high / scale)
    initial = from_min if from_min_error < from_max_error else from_max
    zero = int(np.clip(np.rint(initial), 0, ACTIVATION_QMAX))
    scale32 = np.float32(scale)
    inverse = np.float32(1.0) / scale32
    values = np.clip(np.rint(x * inverse + np.float32(zero)), 0, 255).astype(np.uint8)
    return values, np.uint8(zero), scale32


def _widened(low: float, high: float, scale: float) -> tuple[float, float]:
    """torch's adjustment of min/max when the scale is cut off at SMALL_SCALE."""
    if low == 0.0:
        return low, float(np.float32(SMALL_SCALE * ACTIVATION_QMAX))
    if high == 0.0:
        return float(np.float32(-SMALL_SCALE * ACTIVATION_QMAX)), high
    amplifier = np.float32(SMALL_SCALE / np.float32(scale))
    return float(np.float32(low) * amplifier), float(np.float32(high) * amplifier)


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False  # shapes change every step: nothing to keep between calls
    options.enable_mem_pattern = False  # a plan per cache length would only grow
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return cpu_session(path, options)


class OnnxSteps:
    """decoding.StepDecoder over the exported graphs; a cache is the list of every layer's k, v arrays.

    Every graph runs on the stage's `threads`: on 2 threads against one, a transcription took 0.92x the time
    (real clips, median) and 0.90x (the 45 s recording), with the same text (bench/asr_decoder_threads.py)."""

    def __init__(self, files: DecoderFiles, n_text_ctx: int, threads: int) -> None:
        self.step, self.cross_session, self.proj = (
            _session(p, threads) for p in (files.step, files.cross, files.proj))
        self.n_text_ctx = n_text_ctx
        self.cross_names = [i.name for i in self.cross_session.get_outputs()]
        self.cache_names = [i.name for i in self.step.get_inputs() if i.name.startswith("cache_")]
        self.output_names = [o.name for o in self.step.get_outputs() if o.name != "scores"]
        _, heads, _, width = self.step.get_inputs()[-1].shape
        self.empty = np.zeros((1, heads, 0, width), np.float32)

    def cross(self, features: np.ndarray) -> list[np.ndarray]:
        """Every layer's cross-attention keys and values for one window's features [1, positions, state]."""
        return self.cross_session.run(self.cross_names, {"features": features})

    def begin(self, audio: list[np.ndarray], tokens: list[int], positions: list[int]) -> tuple[np.ndarray, list]:
        hidden, cache = self._run(audio, [self.empty] * len(self.cache_names), np.array([tokens], np.int64))
        return self._logits(hidden[0, positions]), cache

    def advance(self, audio: list[np.ndarray], cache: list[np.ndarray], tokens: np.ndarray) -> tuple[np.ndarray, list]:
        hidden, cache = self._run(audio, cache, tokens[:, None])
        return self._logits(hidden[:, -1]), cache

    def expand(self, cache: list[np.ndarray], n: int) -> list[np.ndarray]:
        return [np.repeat(c, n, axis=0) for c in cache]

    def select(self, cache: list[np.ndarray], rows: np.ndarray) -> list[np.ndarray]:
        return [c[rows] for c in cache]

    def hidden_states(self, audio: list[np.ndarray], tokens: np.ndarray) -> np.ndarray:
        """Teacher forcing: hidden states [n, T, state] of n token rows (right-padded) in one pass, no cache."""
        return self._run(audio, [np.repeat(self.empty, len(tokens), axis=0)] * len(self.cache_names), tokens)[0]

    def hidden_after(self, audio: list[np.ndarray], prefix: list[int], rows: np.ndarray) -> tuple[np.ndarray,
                                                                                                 np.ndarray, list]:
        """Teacher forcing of n token rows [n, L] (right-padded) after one shared `prefix`: (the prefix's last
        hidden state [state], the rows' hidden states [n, L, state], the cache of prefix + rows). The prefix is
        read once and its cache shared, so each row's cross-attention covers only its own tokens: the same
        numbers as hidden_states on prefix + row, without n copies of the prefix's attention (a long prompt's
        was ~90 MB a layer for 8)."""
        hidden, cache = self._run(audio, [self.empty] * len(self.cache_names), np.array([prefix], np.int64))
        rows_hidden, grown = self._run(audio, self.expand(cache, len(rows)), rows)
        return hidden[0, -1], rows_hidden, grown

    def token_logits(self, hidden: np.ndarray) -> np.ndarray:
        """Logits [rows, vocab] of hidden states [rows, state], by the same int8 projection as decoding."""
        return self._logits(hidden)

    def logits_chunks(self, hidden: np.ndarray, rows: int) -> Iterator[np.ndarray]:
        """token_logits(hidden), `rows` rows at a time: the same numbers (the rows share one activation
        quantization, as in one call) without the whole [rows, vocab] array at once (200 MB for 1000 rows)."""
        values, zero, scale = quantize_rows(np.ascontiguousarray(hidden))
        for k in range(0, len(values), rows):
            yield self.proj.run(["logits"], {"x_q": values[k:k + rows], "x_zero": np.array(zero),
                                             "x_scale": np.array(scale)})[0]

    def aligned(self, audio: list[np.ndarray], tokens: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """One row teacher-forced: (hidden [T, state], raw scores of the alignment heads [heads, T, positions])."""
        hidden, scores, _ = self.aligned_cached(audio, tokens)
        return hidden, scores

    def aligned_cached(self, audio: list[np.ndarray], tokens: list[int]) -> tuple[np.ndarray, np.ndarray, list]:
        """aligned() and the cache of `tokens`: the step graph run on the whole text with an empty cache."""
        feeds = {"tokens": np.array([tokens], np.int64), **dict(zip(self.cross_names, audio, strict=True)),
                 **dict.fromkeys(self.cache_names, self.empty)}
        hidden, scores, *cache = self.step.run(["hidden", "scores", *self.output_names[1:]], feeds)
        return hidden[0], scores[0], cache

    def _run(self, audio: list[np.ndarray], cache: list[np.ndarray], tokens: np.ndarray) -> tuple[np.ndarray, list]:
        feeds = {"tokens": tokens, **dict(zip(self.cross_names, audio, strict=True)),
                 **dict(zip(self.cache_names, cache, strict=True))}
        hidden, *grown = self.step.run(self.output_names, feeds)
        return hidden, grown

    def _logits(self, hidden: np.ndarray) -> np.ndarray:
        values, zero, scale = quantize_rows(np.ascontiguousarray(hidden))
        return self.proj.run(["logits"], {"x_q": values, "x_zero": np.array(zero), "x_scale": np.array(scale)})[0]


class OnnxEngine:
    """The ONNX encoder and decoder: what transcriber.WindowDecoder drives on the default CPU path."""

    def __init__(self, encoder: Any, steps: OnnxSteps, tokenizer: Tokenizer) -> None:
        self.encoder = encoder
        self.steps = steps
        self.tokenizer = tokenizer

    def prepare(self, mel: Any) -> list[np.ndarray]:
        return self.steps.cross(self.encoder.features(mel))

    def decode(self, audio: list[np.ndarray], options: DecodeOptions, temperature: float, prompt: list[int],
               suppress: tuple[int, ...], max_timestamp_index: int) -> WindowResult:
        return decode_window(self.steps, audio, self.tokenizer, options, temperature, prompt, suppress,
                             max_timestamp_index)
