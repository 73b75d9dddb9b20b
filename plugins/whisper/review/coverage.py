"""No speech is lost silently: what VAD heard and no kept word covers is decoded again, or reported.

Whisper can skip speech without any error: a decode that ends (end of text)
with audio left in its window, a segment dropped for low confidence between
two kept ones, a seek past the last timestamp. A reader of the record cannot
tell a skipped phrase from silence, so the stage compares the speech spans
silero-vad found with the time of every word it kept (word_timing.py): speech
left uncovered for at least `min_uncovered_s` is decoded again on its own,
and whatever that second pass cannot turn into words is reported in
`dropped[]` with reason `not_transcribed`, like a decoding loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

NOT_TRANSCRIBED = "not_transcribed"


@dataclass(frozen=True)
class CoverageSettings:
    """Chosen on the tune set's clips (synthetic speech; bench/asr_review_tuning.py), not on reporting sets.

    min_head_uncovered_s: a segment's first word starts no earlier than its own start timestamp (word_spans.py),
    so speech before a segment the decoder began late is visible here; on tune's 40 clips (40 speech spans) no
    span's first kept word began after its start at all, so a shorter stretch than elsewhere can count: a short
    word (0.3 s) skipped at the start of what was said is found."""

    word_margin_s: float = 0.3  # a word covers this much before and after its aligned time (DTW is coarse)
    min_uncovered_s: float = 0.7  # shorter uncovered speech is breath, a click, or VAD's own padding
    min_head_uncovered_s: float = 0.3  # the same before the first kept word of a stretch of speech
    redo_margin_s: float = 0.2  # audio decoded around an uncovered piece


Interval = tuple[float, float]


def covered_by(segments: Iterable[dict], dropped: Iterable[dict], margin_s: float) -> list[Interval]:
    """Time each kept word accounts for (a segment without word times: its own span), and what was reported."""
    out: list[Interval] = []
    for segment in segments:
        words = segment.get("words") or []
        if words:
            out += [(w["start_s"] - margin_s, w["end_s"] + margin_s) for w in words]
        else:
            out.append((segment["start_s"] - margin_s, segment["end_s"] + margin_s))
    out += [(d["start_s"], d["end_s"]) for d in dropped]
    return out


def uncovered(speech: Iterable[Interval], covered: Iterable[Interval], min_s: float,
              min_head_s: float | None = None) -> list[Interval]:
    """Pieces of `speech` that no interval of `covered` overlaps, each at least `min_s` long (`min_head_s` for
    the piece before the first covered word of a speech span: the start of what was said)."""
    blocks = sorted(covered)
    out = []
    for start, end in speech:
        at = start
        for c_start, c_end in blocks:
            if c_end <= at or c_start >= end:
                continue
            least = min_s if at > start or min_head_s is None else min_head_s
            if c_start - at >= least:
                out.append((round(at, 3), round(c_start, 3)))
            at = max(at, c_end)
        if end - at >= min_s:
            out.append((round(at, 3), round(end, 3)))
    return out


def recover(gaps: list[Interval], redo: Callable[[float, float], list[dict]], segments: list[dict],
            dropped: list[dict]) -> list[Interval]:
    """Decode each gap again (`redo(start_s, end_s)` -> its segments, on the recording's clock): segments whose
    words fall in the gap join `segments`; a gap that yields none goes to `dropped`. Returns the gaps reported."""
    reported = []
    for start_s, end_s in gaps:
        found = [s for s in redo(start_s, end_s) if _inside(s, start_s, end_s)]
        if found:
            segments.extend(found)
        else:
            dropped.append({"start_s": start_s, "end_s": end_s, "reason": NOT_TRANSCRIBED})
            reported.append((start_s, end_s))
    segments.sort(key=lambda s: s["start_s"])
    dropped.sort(key=lambda d: d["start_s"])
    return reported


def _inside(segment: dict, start_s: float, end_s: float) -> bool:
    """Most of the segment's words lie in the gap: it holds the lost speech, not a neighbour decoded again."""
    words = segment.get("words") or []
    if not words:
        return start_s <= (segment["start_s"] + segment["end_s"]) / 2 <= end_s
    middles = [(w["start_s"] + w["end_s"]) / 2 for w in words]
    return sum(start_s <= m <= end_s for m in middles) * 2 > len(middles)
