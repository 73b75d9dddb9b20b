"""Voice activity detection with silero-vad: the first gate against words invented over silence.

Whisper, given a window with no speech, still writes something ("You",
"Thank you"); for a medic's record that is the worst failure. Audio therefore
reaches the recogniser only where silero-vad hears speech. The ONNX model that
ships inside the silero-vad package runs on onnxruntime with one thread
(~0.2 ms per 32 ms window), and its own hysteresis (ported in vad_spans.py: the
package's module imports torch) turns probabilities into spans. The package is
only located, never imported. Each live stream keeps its own recurrent state
(`VadState`), so one loaded model serves any number of streams.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
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

        model_path = silero_onnx_path()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = onnxruntime.InferenceSession(str(model_path), sess_options=options,
                                               providers=["CPUExecutionProvider"])
        return cls(session, settings or VadSettings())

    def configure(self, settings: VadSettings) -> None:
        """A profile switch: the new thresholds apply from the next window on; open streams keep their state."""
        self.settings = settings

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

    def starts_on_speech(self, audio: np.ndarray, within_ms: float = 96.0) -> bool:
        """Speech in the first `within_ms` of `audio`: it holds no pause before its first word (a recording
        that starts on a word; VAD's pad could not be taken from before it)."""
        windows = max(1, round(within_ms * RATE_HZ / 1000 / WINDOW_SAMPLES))
        head = np.pad(audio[: windows * WINDOW_SAMPLES], (0, max(0, windows * WINDOW_SAMPLES - len(audio))))
        return any(p >= self.settings.threshold for p in self.probabilities(head))

    def speech_spans(self, audio: np.ndarray) -> list[Span]:
        """Where a whole recording holds speech, in samples; spans longer than max_utterance_s are split."""
        if len(audio) < WINDOW_SAMPLES:
            return []
        from tcccd.plugins.whisper.stage.vad_spans import speech_spans_from_probs

        s = self.settings
        spans = speech_spans_from_probs(
            self.probabilities(audio), threshold=s.threshold, neg_threshold=s.release_threshold,
            min_speech_ms=s.min_speech_ms, max_speech_s=s.max_utterance_s, min_silence_ms=s.min_silence_ms,
            speech_pad_ms=s.speech_pad_ms, audio_length_samples=len(audio))
        return [Span(start, end) for start, end in spans]


def silero_onnx_path() -> Path:
    """The ONNX model inside the installed silero-vad package, found without importing it (its __init__ imports
    torch and pins it to one thread)."""
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("voice activity detection needs the package silero-vad (pip install 'tcccd[asr]')")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "silero_vad.onnx"
    if not path.is_file():
        raise FileNotFoundError(f"the silero-vad package has no {path.name} at {path}")
    return path


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
