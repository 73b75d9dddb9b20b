"""A Piper sentence in pieces: its first audio leaves as soon as it is decoded, while the rest is.

A Piper voice is one VITS graph: text encoder, duration predictor and flow
(about a fifth of a sentence's compute), then the waveform decoder (the rest).
Run whole, a sentence's first sample waits for its last: ~130 ms for a
55-character sentence on 2 cores, where Wyoming clients time the first audio.
Cut at the decoder's input, the front gives the whole sentence's latent frames
(its prosody is decided on the whole sentence, as before), and the decoder
then runs on windows of them, each with CONTEXT_FRAMES of its neighbours on
both sides, whose samples are not kept: the pieces join into the whole
sentence's decode to 6e-7 (8 frames of context: 3e-4). Only a request's first
sentence is cut, FIRST_FRAMES then GROWTH times more per piece, because
context is decoded twice; later sentences are made whole while it plays.

The two graphs are cut once per voice file and kept in the stage's cache
directory. A voice the cut does not fit (another export, a multi-speaker
voice, whose speaker also conditions the decoder) is synthesised whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DECODER_ENTRY = "/dec/conv_pre/Conv"  # the decoder's first node in Piper's VITS exports
CONTEXT_FRAMES = 16
FIRST_FRAMES = 24  # ~280 ms of audio at 22 050 Hz, hop 256
GROWTH = 3


@dataclass
class PiecewiseVoice:
    """The front (phoneme ids -> latent frames) and the decoder (latent frames -> samples) of one voice."""

    front: Any
    decoder: Any
    latent_name: str
    hop_samples: int  # output samples per latent frame

    @classmethod
    def load(cls, onnx_path: Path, options: Any, cache_dir: Path) -> PiecewiseVoice | None:
        """Both sessions, or None when this voice's graph is not cut here (then it is synthesised whole)."""
        import onnxruntime

        parts = split_graph(onnx_path, cache_dir)
        if parts is None:
            return None
        front, decoder = (onnxruntime.InferenceSession(str(p), options, providers=["CPUExecutionProvider"])
                          for p in parts)
        latent = decoder.get_inputs()[0]
        probe_frames = 4
        probe = decoder.run(None, {latent.name: np.zeros((1, latent.shape[1], probe_frames), np.float32)})[0]
        return cls(front, decoder, latent.name, probe.size // probe_frames)

    def latents(self, phoneme_ids: list[int], scales: np.ndarray) -> np.ndarray:
        ids = np.array([phoneme_ids], dtype=np.int64)
        return self.front.run(None, {"input": ids, "input_lengths": np.array([ids.shape[1]], dtype=np.int64),
                                     "scales": scales})[0]

    def decode(self, latents: np.ndarray) -> np.ndarray:
        return self.decoder.run(None, {self.latent_name: latents})[0].reshape(-1)

    def pieces(self, latents: np.ndarray) -> Iterator[np.ndarray]:
        """The sentence's samples, piece by piece (piece_bounds), each decoded with its neighbours' context."""
        frames = latents.shape[2]
        for lo, hi in piece_bounds(frames):
            start, end = max(0, lo - CONTEXT_FRAMES), min(frames, hi + CONTEXT_FRAMES)
            audio = self.decode(np.ascontiguousarray(latents[:, :, start:end]))
            yield audio[(lo - start) * self.hop_samples:(hi - start) * self.hop_samples]


def piece_bounds(frames: int) -> list[tuple[int, int]]:
    """Frame ranges of the pieces: FIRST_FRAMES, then GROWTH times the last; none shorter than FIRST_FRAMES."""
    cuts, size = [0], FIRST_FRAMES
    while cuts[-1] + size <= frames - FIRST_FRAMES:
        cuts.append(cuts[-1] + size)
        size *= GROWTH
    cuts.append(frames)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def split_graph(onnx_path: Path, cache_dir: Path) -> tuple[Path, Path] | None:
    """The voice's front and decoder graphs, cut once and cached by file name, size and modification time."""
    stat = onnx_path.stat()
    stem = cache_dir / "piper" / f"{onnx_path.stem}-{stat.st_size}-{stat.st_mtime_ns}"
    front_path, decoder_path = stem.with_suffix(".front.onnx"), stem.with_suffix(".decoder.onnx")
    if front_path.is_file() and decoder_path.is_file():
        return front_path, decoder_path
    try:
        import onnx
        import onnx.utils
    except ImportError:  # the `tts` extra brings it; without it, whole sentences
        return None
    model = onnx.load(str(onnx_path))
    inputs = [i.name for i in model.graph.input]
    entry = next((n for n in model.graph.node if n.name == DECODER_ENTRY), None)
    if entry is None or inputs != ["input", "input_lengths", "scales"]:
        return None
    latent = entry.input[0]
    weight = next((t for t in model.graph.initializer if t.name == entry.input[1]), None)
    if weight is None:
        return None
    extractor = onnx.utils.Extractor(model)
    front = extractor.extract_model(inputs, [latent])
    decoder = extractor.extract_model([latent], [o.name for o in model.graph.output])
    # the cut tensor had no recorded shape: (batch, channels of the decoder's first conv, frames)
    decoder.graph.input[0].CopyFrom(onnx.helper.make_tensor_value_info(
        latent, onnx.TensorProto.FLOAT, [1, weight.dims[1], "frames"]))
    if not _self_contained(decoder.graph):
        return None
    front_path.parent.mkdir(parents=True, exist_ok=True)
    for graph, path in ((front, front_path), (decoder, decoder_path)):
        partial = path.with_suffix(".partial")
        onnx.save(graph, str(partial))
        partial.replace(path)  # a worker killed mid-write leaves no half graph under the final name
    return front_path, decoder_path


def _self_contained(graph: Any) -> bool:
    """Whether every tensor the graph's nodes read is made in it: the decoder needs nothing but the latent frames."""
    known = {""} | {i.name for i in graph.input} | {t.name for t in graph.initializer}
    for node in graph.node:
        if not set(node.input) <= known:
            return False
        known.update(node.output)
    return True


class Loudness:
    """One request's gain: the voice's calibrated gain times `volume`, lowered for good where a piece would clip.

    Piper scales each sentence to peak at full scale, which needs the whole sentence before its first sample.
    Speech from one voice has a steady RMS (0.041-0.064 raw over 25 sentences here) and uneven peaks
    (0.40-0.85), so a gain calibrated once per voice to TARGET_RMS keeps sentences as loud as one another,
    and lowering it as soon as a piece would clip (before that piece is sent) means no sample is ever clipped.
    """

    TARGET_RMS = 0.1  # what peak normalisation gives a typical sentence of this voice (rms/peak ~0.1)

    def __init__(self, voice_gain: float, volume: float) -> None:
        self.gain = voice_gain * volume

    @classmethod
    def voice_gain(cls, calibration: np.ndarray) -> float:
        rms = float(np.sqrt(np.mean(np.square(calibration, dtype=np.float64))))
        return cls.TARGET_RMS / rms if rms > 1e-6 else 1.0

    def apply(self, audio: np.ndarray) -> np.ndarray:
        peak = float(np.max(np.abs(audio))) if len(audio) else 0.0
        if peak * self.gain > 1.0:
            self.gain = 1.0 / peak
        return audio * self.gain
