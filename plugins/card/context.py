"""The words around a finding: which casualty it is for, whether it was negated or corrected, and when.

Casualty switching: "casualty two", "patient number 3", "back to casualty one",
"next patient" (the current number plus one); the request says which casualty is
current, and each switch said becomes an event and the current casualty for
what follows it. "casualty collection point" and "casualty is alert" switch nothing.

Negation: a cue before a finding in its own clause ("no tourniquet needed",
"denies pain", "no pulse in the left wrist") or right after it ("tourniquet not
needed"). A negated finding is never a positive field: the card keeps it as a
note in the medic's words. "no known allergies" is an answer, not a negation:
its rule reads it whole, so the cue lies inside the finding, not before.

Not done: a treatment named in a request or as equipment ("grab the oxygen",
"get the NPA ready", "the tourniquet bag is empty", "needs a chest seal") is
not a treatment given, and gives no event; an act word in the clause
("applied", "given", "on the left leg") says it was done.

Correction: "correction, pulse 110", "correction: ketamine 50 mg IM" marks what
follows it in the sentence, or in the next sentence when nothing follows; the
card replaces the casualty's last event of the same kind with it.

Times: a four-digit time counts when the ASR's number step wrote it as a time
(its `numbers[]` trail says rule "time") or when it is said as one ("at 0915",
"0915 hours"): "last four 1234" is not a time. "five minutes ago" counts back
from the utterance. Each event takes the time said nearest to it in its own
sentence; the utterance's clock time is always kept beside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tcccd.plugins.card.sentences import Sentence, numbers_in

_NAMED = re.compile(r"\b(?:back\s+to\s+)?(?:casualty|patient|pt)\s+(?:number\s+|#\s*)?(?=\w)")
_NEXT = re.compile(r"\bnext\s+(?:casualty|patient)\b")
# Whisper writes "Casualty two." as "Casualty, too, ..." (tiny.en, the kit's own voice): read as a switch only where
# "too" cannot mean "also", the whole of a sentence's opening words ("Casualty too." / "Casualty, too, same blast")
_TOO = re.compile(r"\s*(?:casualty|patient)\s*,?\s+(too)\s*(?:[,.]|$)")
MAX_CASUALTY = 999
_NEGATION_BEFORE = re.compile(r"\b(?:no|not|denies|denied|without|negative\s+for|absent|none|never|nor)\b")
_NEGATION_AFTER = re.compile(r"\s*(?:is\s+|was\s+)?(?:not\s+(?:needed|required|indicated|applied|given|done|"
                             r"present|palpable|felt)|negative|absent|none)\b")
_REQUEST = re.compile(r"\b(?:get|grab|hand|pass|bring|need|needs|want|wants|prep|prepare|find|where|ready|out\s+of|"
                      r"ran\s+out|running\s+low|restock|check)\b")
_EQUIPMENT = re.compile(r"\b(?:bag|bags|pouch|box|case|supplies|packaging|wrapper)\b")
_DONE = re.compile(r"\b(?:applied|placed|in\s+place|inserted|given|gave|administered|started|established|packed|"
                   r"tightened|converted|wrapped|covered|secured|pushed|hung|running|done)\b")
_CORRECTION = re.compile(r"\b(?:correction|correct\s+that|scratch\s+that|let\s+me\s+correct\s+that)\b[\s,:.]*")
_HHMM = re.compile(r"(?<![\w.:/])([01]\d|2[0-3])([0-5]\d)(?![\w.:/%])")
_TIME_BEFORE = re.compile(r"\b(?:at|time|since|from|around|about)\s+$")
_TIME_AFTER = re.compile(r"\s*(?:hours|hrs|local|zulu)\b")
_AGO = re.compile(r"\s+(?P<unit>minutes?|mins?|hours?|hrs?)\s+ago\b")
_HALF_HOUR = re.compile(r"\bhalf\s+an\s+hour\s+ago\b")


@dataclass(frozen=True)
class Switch:
    number: int | None  # None: "next", one more than the casualty current at that point
    start: int
    end: int


def switches(s: Sentence) -> Iterator[Switch]:
    found = []
    for match in _NAMED.finditer(s.lower, s.start, s.end):
        number = next(iter(numbers_in(s.text, match.end(), s.end)), None)
        if number and number.start == match.end() and number.value is not None and \
                1 <= number.value <= MAX_CASUALTY and number.value == int(number.value):
            found.append(Switch(int(number.value), match.start(), number.end))
    found += [Switch(None, m.start(), m.end()) for m in _NEXT.finditer(s.lower, s.start, s.end)]
    too = _TOO.match(s.lower, s.start, s.end)
    if too and not found:
        found.append(Switch(2, s.start + len(too.group(0)) - len(too.group(0).lstrip()), too.end(1)))
    yield from sorted(found, key=lambda w: w.start)


def negated(s: Sentence, start: int, end: int) -> bool:
    clause_start, clause_end = s.clause_of(start)
    return bool(_NEGATION_BEFORE.search(s.lower, clause_start, start)
                or _NEGATION_AFTER.match(s.lower, end, clause_end))


def not_done(s: Sentence, start: int) -> bool:
    """A treatment's clause asks for it or talks about its kit, and says nothing of it being done."""
    clause_start, clause_end = s.clause_of(start)
    talk = _REQUEST.search(s.lower, clause_start, clause_end) or _EQUIPMENT.search(s.lower, clause_start, clause_end)
    return bool(talk) and not _DONE.search(s.lower, clause_start, clause_end)


def correction_from(s: Sentence) -> int | None:
    """Where a correction cue ends in this sentence (what follows it is the corrected value), or None."""
    match = _CORRECTION.search(s.lower, s.start, s.end)
    return match.end() if match else None


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
        said_as_time = _TIME_BEFORE.search(s.lower, s.start, match.start()) or _TIME_AFTER.match(s.lower, match.end())
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
