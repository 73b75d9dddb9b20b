"""From what Whisper heard to what the record says, one segment at a time, with the audit trail kept.

Two rewriting steps run after the decoder, in this order: the vocabulary
correction (a run of heard words that sounds like a lexicon term becomes the
term) and the inverse normalisation (numbers, doses, vitals and times as a
medic writes them). Neither can add a word that was not heard. Each segment
keeps `heard` (the model's own text) beside `text` (the record), with every
correction (term, span in `heard`, similarity) and every number rewrite (rule,
the words it replaced, span in the corrected text), so that a reviewer can see why a word changed and
the journal holds both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tcccd.plugins.whisper.numbers import inverse_normalize
from tcccd.plugins.whisper.repetition import has_word


@dataclass(frozen=True)
class Written:
    """One segment's text for the record, and how it came from what was heard."""

    heard: str
    text: str
    corrections: list[dict[str, Any]]
    numbers: list[dict[str, Any]]


class SegmentWriter:
    """Applies the configured rewriting steps; `corrector` is a VocabularyCorrector or None (correction off)."""

    def __init__(self, corrector: Any, write_numbers: bool) -> None:
        self.corrector = corrector
        self.write_numbers = write_numbers

    def write(self, heard: str) -> Written | None:
        """None when `heard` holds no word ("." or "..." alone): nothing was said that the record could keep."""
        heard = heard.strip()
        if not has_word(heard):
            return None
        corrected, applied = self.corrector.apply(heard) if self.corrector is not None else (heard, [])
        text, rewrites = inverse_normalize(corrected) if self.write_numbers else (corrected, [])
        return Written(heard, text, [asdict(c) for c in applied], [asdict(r) for r in rewrites])


@dataclass
class Heard:
    """What a recording or an utterance gave: kept segments, and speech dropped because the decoder looped."""

    segments: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def add(self, written: Written, start_s: float, end_s: float, avg_logprob: float, no_speech_prob: float) -> None:
        self.segments.append({"start_s": round(start_s, 3), "end_s": round(end_s, 3), "text": written.text,
                              "heard": written.heard, "corrections": written.corrections,
                              "numbers": written.numbers, "avg_logprob": round(avg_logprob, 4),
                              "no_speech_prob": round(no_speech_prob, 4)})

    @property
    def text(self) -> str:
        return " ".join(s["text"] for s in self.segments).strip()

    def dropped_field(self) -> dict[str, Any]:
        """`dropped` on the wire only when something was: the broker raises an alert for it."""
        return {"dropped": self.dropped} if self.dropped else {}
