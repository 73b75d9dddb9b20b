"""What a transcription gives back: the kept segments (with what the reviewer made of them) and the speech that
could not be transcribed, reported rather than dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tcccd.plugins.whisper.engine.mel import HOP_LENGTH, SAMPLE_RATE_HZ


@dataclass
class Segment:
    start_s: float
    end_s: float
    text: str
    tokens: list[int]
    avg_logprob: float
    no_speech_prob: float
    compression_ratio: float
    temperature: float
    review: Any = None  # what options.review made of it (the stage's reviewed text, words, audit trail)


@dataclass(frozen=True)
class DroppedSpeech:
    """A window whose speech could only be decoded as a loop: never emitted, reported instead."""

    start_s: float
    end_s: float
    reason: str
    heard: str  # what the looping decoder wrote, for the audit log only


@dataclass
class Transcription:
    text: str
    segments: list[Segment]
    duration_s: float
    timings_ms: dict[str, float]
    dropped: list[DroppedSpeech] = field(default_factory=list)
    full_window_retries: int = 0


def dropped_window(heard: str, seek: int, segment_frames: int) -> DroppedSpeech:
    start_s = seek * HOP_LENGTH / SAMPLE_RATE_HZ
    end_s = (seek + segment_frames) * HOP_LENGTH / SAMPLE_RATE_HZ
    return DroppedSpeech(round(start_s, 3), round(end_s, 3), "decoding_loop", heard)
