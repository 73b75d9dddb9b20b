"""Voice activity detection with silero-vad: the first gate against words invented over silence.

Whisper, given a window with no speech, still writes something ("You",
"Thank you"); for a medic's record that is the worst failure. Audio therefore
reaches the recogniser only where silero-vad hears speech. The ONNX model that
ships inside the silero-vad package runs on onnxruntime with one thread
(~0.2 ms per 32 ms window), and its own hysteresis (`get_speech_timestamps_from_probs`)
turns probabilities into spans. Each live stream keeps its own recurrent state
(`VadState`), so one loaded model serves any number of streams.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

RATE_HZ = 16000
WINDOW_SAMPLES = 512
CONTEXT_SAMPLES = 64


@dataclass(frozen=True)
class VadSettings:
    threshold: float = 0.5
    min_silence_ms: int = 500
    speech_pad_ms: int = 200
    min_speech_ms: int = 250
    max_utterance_s: float = 30.0

    @property
    def release_threshold(self) -> float:
        """Speech ends only below this: silero's own hysteresis margin."""
        return max(0.01, self.threshold - 0.15)


@dataclass
class VadState:
    """One stream's recurrent state: the LSTM state and the last 64 samples the model sees again."""

    state: np.ndarray = field(default_factory=lambda: np.zeros((2, 1, 128), np.float32))
    context: np.ndarray = field(default_factory=lambda: np.zeros((1, CONTEXT_SAMPLES), np.float32))


@dataclass(frozen=True)
class Span:
    start: int
    end: int

    @property
    def start_s(self) -> float:
        return self.start / RATE_HZ

    @property
    def end_s(self) -> float:
        return self.end / RATE_HZ


class SpeechDetector:
    def __init__(self, session: Any, settings: VadSettings) -> None:
        self._session = session
        self.settings = settings

    @classmethod
    def load(cls, settings: VadSettings | None = None) -> SpeechDetector:
        import onnxruntime

        with _torch_threads_kept():
            model_path = resources.files("silero_vad.data").joinpath("silero_vad.onnx")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(str(model_path), sess_options=options,
                                               providers=["CPUExecutionProvider"])
        return cls(session, settings or VadSettings())

    def step(self, state: VadState, window: np.ndarray) -> float:
        """Speech probability of one 512-sample window at 16 kHz; advances `state`."""
        frame = np.concatenate([state.context, window.reshape(1, -1).astype(np.float32)], axis=1)
        prob, state.state = self._session.run(None, {"input": frame, "state": state.state,
                                                     "sr": np.array(RATE_HZ, dtype=np.int64)})
        state.context = frame[:, -CONTEXT_SAMPLES:]
        return float(prob.reshape(-1)[0])

    def probabilities(self, audio: np.ndarray) -> list[float]:
        state = VadState()
        padded = np.pad(audio, (0, -len(audio) % WINDOW_SAMPLES))
        return [self.step(state, padded[i:i + WINDOW_SAMPLES]) for i in range(0, len(padded), WINDOW_SAMPLES)]

    def speech_spans(self, audio: np.ndarray) -> list[Span]:
        """Where a whole recording holds speech, in samples; spans longer than max_utterance_s are split."""
        if len(audio) < WINDOW_SAMPLES:
            return []
        spans = _timestamps_from_probs()(
            self.probabilities(audio), sampling_rate=RATE_HZ, threshold=self.settings.threshold,
            neg_threshold=self.settings.release_threshold, min_speech_duration_ms=self.settings.min_speech_ms,
            max_speech_duration_s=self.settings.max_utterance_s, min_silence_duration_ms=self.settings.min_silence_ms,
            speech_pad_ms=self.settings.speech_pad_ms, audio_length_samples=len(audio))
        return [Span(int(s["start"]), int(s["end"])) for s in spans]


def _timestamps_from_probs() -> Any:
    """silero's span logic."""
    with _torch_threads_kept():
        from silero_vad import get_speech_timestamps_from_probs
    return get_speech_timestamps_from_probs


@contextlib.contextmanager
def _torch_threads_kept() -> Iterator[None]:
    """Importing silero_vad (even to find its model file) pins torch to one thread; undo that."""
    import torch

    threads = torch.get_num_threads()
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def pack_spans(spans: list[Span], max_chunk_s: float, max_gap_s: float) -> list[Span]:
    """Neighbouring spans merged while the result stays under max_chunk_s and the gap is short.

    Each chunk costs one decoder pass; merging short phrases of one sentence
    keeps the language context that Whisper needs without decoding silence.
    """
    chunks: list[Span] = []
    for span in spans:
        if chunks and (span.start - chunks[-1].end) <= max_gap_s * RATE_HZ \
                and (span.end - chunks[-1].start) <= max_chunk_s * RATE_HZ:
            chunks[-1] = Span(chunks[-1].start, span.end)
        else:
            chunks.append(span)
    return chunks
