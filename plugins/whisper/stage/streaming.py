"""Live streams cut into utterances at pauses, with memory bounded by one utterance.

A medic may keep a stream open for minutes. Only the current utterance's
samples are kept (at most max_utterance_s, where it is cut), plus a short
pre-roll so the first syllable before the VAD fires is not lost. Each stream
has its own VAD state and resampler, so streams never disturb one another.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcccd.kit.audio import decode
from tcccd.kit.plugin import PluginError
from tcccd.plugins.whisper.stage.vad import RATE_HZ, WINDOW_SAMPLES, SpeechDetector, VadSettings, VadState
from tcccd.wire.protocol import AudioFormat

WINDOW_MS = 1000 * WINDOW_SAMPLES / RATE_HZ


@dataclass(frozen=True)
class Utterance:
    index: int
    start_s: float
    end_s: float
    audio: np.ndarray


class UtteranceSegmenter:
    """Feeds audio of any chunk size to the VAD 32 ms at a time; returns utterances as they end."""

    def __init__(self, detector: SpeechDetector, settings: VadSettings) -> None:
        self._detector = detector
        self.settings = settings
        self._state = VadState()
        self._pending = np.zeros(0, np.float32)
        self._preroll: collections.deque[np.ndarray] = collections.deque(
            maxlen=max(1, round(settings.speech_pad_ms / WINDOW_MS)))
        self._windows: list[np.ndarray] = []
        self._start_sample = 0
        self._seen_samples = 0
        self._speech_windows = 0
        self._silent_windows = 0
        self._emitted = 0
        self._settled_windows = 0  # > 0: the open utterance's audio if the pause going on ends it (windows)

    @property
    def in_speech(self) -> bool:
        return bool(self._windows)

    @property
    def next_index(self) -> int:
        """Index the utterance in progress will get."""
        return self._emitted

    @property
    def held_samples(self) -> int:
        """Samples held in memory: what stays bounded however long the stream runs."""
        return len(self._pending) + WINDOW_SAMPLES * (len(self._windows) + len(self._preroll))

    def current_audio(self) -> np.ndarray:
        return np.concatenate(self._windows) if self._windows else np.zeros(0, np.float32)

    def settled(self) -> tuple[int, float, np.ndarray] | None:
        """(index, start_s, audio) the open utterance will have if the pause now going on ends it: its speech and
        the pad after it are in. None while speech goes on, or before the pad has come. The final may be decoded
        from this at once (a speculative final) instead of after the rest of the pause."""
        if not self._settled_windows:
            return None
        return self._emitted, self._start_sample / RATE_HZ, np.concatenate(self._windows[:self._settled_windows])

    def feed(self, audio: np.ndarray) -> list[Utterance]:
        joined = np.concatenate([self._pending, audio.astype(np.float32, copy=False)])
        whole = len(joined) - len(joined) % WINDOW_SAMPLES
        self._pending = joined[whole:].copy()
        finished = []
        for offset in range(0, whole, WINDOW_SAMPLES):
            utterance = self._step(joined[offset:offset + WINDOW_SAMPLES].copy())
            if utterance is not None:
                finished.append(utterance)
        return finished

    def flush(self) -> list[Utterance]:
        """The utterance still open when the stream ends (the last words before 'stop').

        The last part-window is padded with silence and stepped like any other: the pause it completes may end
        the utterance there, and that utterance is returned as well."""
        finished = self.feed(np.zeros(WINDOW_SAMPLES - len(self._pending), np.float32)) if len(self._pending) else []
        last = self._close(trailing_windows=0) if self._windows else None
        return finished + ([last] if last is not None else [])

    def _step(self, window: np.ndarray) -> Utterance | None:
        prob = self._detector.step(self._state, window)
        position = self._seen_samples
        self._seen_samples += WINDOW_SAMPLES
        if not self._windows:
            if prob >= self.settings.threshold:
                self._start_sample = position - WINDOW_SAMPLES * len(self._preroll)
                self._windows = [*self._preroll, window]
                self._preroll.clear()
                self._speech_windows, self._silent_windows = 1, 0
            else:
                self._preroll.append(window)
            return None
        self._windows.append(window)
        pad_windows = self._preroll.maxlen or 0
        if prob < self.settings.release_threshold:
            self._silent_windows += 1
        else:
            self._silent_windows = 0
            self._speech_windows += prob >= self.settings.threshold
        settles_at = max(pad_windows, 1)  # the pause's windows the utterance keeps as its pad are in
        if self._silent_windows < settles_at:
            self._settled_windows = 0
        elif self._silent_windows == settles_at:
            self._settled_windows = len(self._windows) - (settles_at - pad_windows)
        if self._silent_windows * WINDOW_MS >= self.settings.min_silence_ms:
            return self._close(trailing_windows=max(0, self._silent_windows - pad_windows))
        if len(self._windows) * WINDOW_SAMPLES >= self.settings.max_utterance_s * RATE_HZ:
            return self._close(trailing_windows=0)
        return None

    def _close(self, trailing_windows: int) -> Utterance | None:
        kept = self._windows[:len(self._windows) - trailing_windows]
        speech_ms = self._speech_windows * WINDOW_MS
        self._windows, self._speech_windows, self._silent_windows, self._settled_windows = [], 0, 0, 0
        if speech_ms < self.settings.min_speech_ms or not kept:
            return None
        audio = np.concatenate(kept)
        start_s = self._start_sample / RATE_HZ
        utterance = Utterance(self._emitted, start_s, start_s + len(audio) / RATE_HZ, audio)
        self._emitted += 1
        return utterance


@dataclass
class StreamSession:
    """One stream request: its declared format, resampler, segmenter and finished utterances."""

    audio: AudioFormat
    segmenter: UtteranceSegmenter
    utterances: list[dict[str, Any]] = field(default_factory=list)
    resampler: Any = None
    partials: Any = None  # partials.PartialSchedule, set by the stage
    speculation: Any = None  # speculative.Speculation, set by the stage
    received_samples: int = 0  # 16 kHz samples received so far: the stream's audio clock
    next_seq: int = 0  # the chunk expected next
    gaps: list[dict[str, Any]] = field(default_factory=list)  # audio that never came, not yet told in an utterance

    def note_seq(self, seq: int) -> None:
        """A chunk's `seq` past the one expected: the chunks between never came (dropped by a stage that fell behind,
        or by the microphone's worker when its stream stopped). The words in them are lost; the utterance they fall
        in says so in its `dropped`, and the daemon raises an alert for it, as for speech it could not transcribe."""
        if seq > self.next_seq:
            at_s = round(self.received_samples / RATE_HZ, 3)
            self.gaps.append({"start_s": at_s, "end_s": at_s, "reason": "audio_lost",
                              "chunks_missing": seq - self.next_seq})
        self.next_seq = max(self.next_seq, seq + 1)

    def lost_at_the_end(self, last: bool) -> list[dict[str, Any]]:
        """At the stream's end, audio lost after its last utterance as an utterance with no words: nothing heard,
        and the loss on the record."""
        if not last or not self.gaps:
            return []
        gaps = self.gaps_until(None)
        entry = {"partial": False, "text": "", "utterance": self.segmenter.next_index,
                 "start_s": gaps[0]["start_s"], "end_s": gaps[-1]["end_s"], "dropped": gaps}
        self.utterances.append(entry)
        return [{**entry, "segments": [], "timings_ms": {}}]

    def gaps_until(self, end_s: float | None) -> list[dict[str, Any]]:
        """The gaps up to `end_s` on the stream's clock (all of them with None), taken from those still to tell."""
        told = [g for g in self.gaps if end_s is None or g["start_s"] <= end_s]
        self.gaps = [g for g in self.gaps if g not in told]
        return told

    @classmethod
    def open(cls, audio: AudioFormat | None, detector: SpeechDetector, settings: VadSettings) -> StreamSession:
        audio = audio or AudioFormat()
        if audio.encoding == "wav":
            raise PluginError("stream: expected raw PCM chunks (encoding 'pcm_s16le' or 'pcm_f32le' with "
                              "sample_rate_hz and channels); a WAV file goes to 'transcribe'", code="bad_audio")
        resampler = None
        if audio.sample_rate_hz != RATE_HZ:
            import soxr

            resampler = soxr.ResampleStream(audio.sample_rate_hz, RATE_HZ, 1, dtype="float32")
        return cls(audio, UtteranceSegmenter(detector, settings), resampler=resampler)

    def samples(self, payload: bytes | None, audio: AudioFormat | None, last: bool) -> np.ndarray:
        """One chunk as 16 kHz mono float32; the format may be repeated but not changed mid-stream."""
        if audio is not None and audio != self.audio:
            raise PluginError(f"stream: audio format changed mid-stream from {self.audio.to_dict()} to "
                              f"{audio.to_dict()}; a stream keeps one format", code="bad_audio")
        if not payload:
            if last:
                return self._resample(np.zeros(0, np.float32), last)
            raise PluginError("stream: empty chunk; only the final message may have no payload", code="bad_audio")
        mono, _ = decode(payload, self.audio)
        out = self._resample(mono, last)
        self.received_samples += len(out)
        return out

    def _resample(self, mono: np.ndarray, last: bool) -> np.ndarray:
        if self.resampler is None:
            return mono.astype(np.float32, copy=False)
        return self.resampler.resample_chunk(mono.astype(np.float32), last=last)
