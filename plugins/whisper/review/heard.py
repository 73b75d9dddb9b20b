"""What a recording or an utterance gave the record: segments with their audit trail, and speech not transcribed.

Each segment keeps `heard` (the model's own text) beside `text` (the record),
every applied rewrite with the audio's scores for what was heard and what was
written (`corrections`, `numbers`), the rewrites the audio did not support
(`considered`), each word's time and probability (`words`) and the words the
model was unsure of (`uncertain`). review.py decides them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Written:
    """One segment's text for the record, and how it came from what was heard."""

    heard: str
    text: str
    corrections: list[dict[str, Any]]
    numbers: list[dict[str, Any]]
    considered: list[dict[str, Any]] = field(default_factory=list)
    words: list[dict[str, Any]] = field(default_factory=list)  # times on the transcribed audio's clock
    uncertain: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Heard:
    """What a recording or an utterance gave: kept segments, and speech that was dropped or not transcribed."""

    segments: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def add(self, written: Written, start_s: float, end_s: float, avg_logprob: float, no_speech_prob: float,
            offset_s: float = 0.0) -> None:
        """`offset_s`: where the transcribed audio starts on the recording's clock (segment and word times move)."""
        words = [{**w, "start_s": round(w["start_s"] + offset_s, 3), "end_s": round(w["end_s"] + offset_s, 3)}
                 for w in written.words]
        self.segments.append({"start_s": round(offset_s + start_s, 3), "end_s": round(offset_s + end_s, 3),
                              "text": written.text, "heard": written.heard, "corrections": written.corrections,
                              "numbers": written.numbers, "considered": written.considered, "words": words,
                              "uncertain": written.uncertain, "avg_logprob": round(avg_logprob, 4),
                              "no_speech_prob": round(no_speech_prob, 4)})

    @property
    def text(self) -> str:
        return " ".join(s["text"] for s in self.segments).strip()

    def dropped_field(self) -> dict[str, Any]:
        """`dropped` on the wire only when something was: the broker raises an alert for it."""
        return {"dropped": self.dropped} if self.dropped else {}
