"""Times said in a sentence: clock times ("at 0915") and relative ones ("five minutes ago").

A four-digit time counts when the ASR's number step wrote it as a time (its
`numbers[]` trail says rule "time") or when it is said as one ("at 0915", "0915
hours"): "last four 1234" is not a time. Each event takes the time said nearest
to it in its own sentence; the utterance's clock time is always kept beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcccd.plugins.card.sentences import Sentence, numbers_in

_HHMM = re.compile(r"(?<![\w.:/])([01]\d|2[0-3])([0-5]\d)(?![\w.:/%])")
_CUE_BEFORE = re.compile(r"\b(?:at|time|since|from|around|about)\s+$")
_CUE_AFTER = re.compile(r"\s*(?:hours|hrs|local|zulu)\b")
_AGO = re.compile(r"\s+(?P<unit>minutes?|mins?|hours?|hrs?)\s+ago\b")
_HALF_HOUR = re.compile(r"\bhalf\s+an\s+hour\s+ago\b")


@dataclass(frozen=True)
class Said:
    spoken: str | None  # "0915"
    relative_min: float | None  # -5 for "five minutes ago"
    start: int
    end: int


def times(s: Sentence, time_rewrites: list[tuple[int, int]]) -> list[Said]:
    """Times in the sentence; `time_rewrites` are the spans of `text` the number step wrote under rule "time"."""
    found = []
    for match in _HHMM.finditer(s.text, s.start, s.end):
        by_asr = any(start <= match.start() and match.end() <= end for start, end in time_rewrites)
        said_as_time = _CUE_BEFORE.search(s.lower, s.start, match.start()) or _CUE_AFTER.match(s.lower, match.end())
        if by_asr or said_as_time:
            found.append(Said(match.group(), None, match.start(), match.end()))
    for number in numbers_in(s.text, s.start, s.end):
        ago = _AGO.match(s.lower, number.end, s.end)
        if ago and number.value is not None:
            minutes = number.value * (60 if ago.group("unit").startswith("h") else 1)
            found.append(Said(None, -minutes, number.start, ago.end()))
    found += [Said(None, -30.0, m.start(), m.end()) for m in _HALF_HOUR.finditer(s.lower, s.start, s.end)]
    return sorted(found, key=lambda t: t.start)


def nearest(found: list[Said], start: int, end: int) -> Said | None:
    """The time said closest to the words [start, end)."""
    def distance(t: Said) -> int:
        return 0 if t.start < end and start < t.end else min(abs(t.start - end), abs(start - t.end))

    return min(found, key=distance, default=None)


def local_hhmm(ts: float, utc_offset_min: int) -> str:
    minutes = int((ts // 60 + utc_offset_min) % (24 * 60))
    return f"{minutes // 60:02d}{minutes % 60:02d}"


def shifted(hhmm: str, minutes: float) -> str:
    total = (int(hhmm[:2]) * 60 + int(hhmm[2:]) + round(minutes)) % (24 * 60)
    return f"{total // 60:02d}{total % 60:02d}"
