"""Clock times said the way people read a watch: "ten past nine", "quarter to ten", "half past nine", "half
nine", "nine o'clock", "at two", "at noon".

Such a time names an hour on a 12-hour dial; the card needs a 24-hour one. It is
read as the one of its two readings nearest the moment it was said (within six
hours either way): "twenty past nine" said at 21:40 is 2120, "at two" said at
16:45 is 1400, "ten past ten" said at 09:50 is 1010, twenty minutes ahead (a
time still to come, as context.future tells). A minute count before "to" or
"till" is a time only after "at", "by", "around"... or as a clause of its own ("five to
ten milligrams" is a range; "correction, five to nine." a time), and an hour said
alone only after "at" and at the clause's end ("TQ at nine."); neither after a
reading's word ("pulse at ninety", "pain five to six.").

The clock arithmetic every time on the card uses (minutes ahead, shifts, the
utterance's local clock) is here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_HOURS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10, "eleven": 11, "twelve": 12}
_MINUTES = {"five": 5, "ten": 10, "quarter": 15, "a quarter": 15, "twenty": 20, "twenty five": 25, "twenty-five": 25,
            "half": 30}
_HOUR = r"(?P<hour>1[0-2]|[1-9]|" + "|".join(_HOURS) + r")"
_MINUTE = r"(?P<minute>[1-5]?\d|a\s+quarter|quarter|twenty[\s-]five|twenty|ten|five|half)"
_OWN_CLAUSE = r"(?:(?<=^)|(?<=[,;:]\s)|(?<=[,;:]))"
_CUE = r"(?:\b(?:at|by|around|about|approximately|approx|since|from|till|until)\s+)"
_END = r"(?=\s*(?:o['’]?\s*clock\b|this\s+morning\b|this\s+afternoon\b|this\s+evening\b|tonight\b|[,;!?]|[.:](?!\d)|$))"
_NOT_AFTER = r"(?!\s*(?:minutes?|mins?|hours?|hrs?|mg|mcg|g|ml|cc|units?|grams?|milligrams?|percent|%|over)\b)"

_PAST = re.compile(r"\b" + _MINUTE + r"(?:\s+minutes?)?\s+(?P<dir>past|after)\s+" + _HOUR + r"\b" + _NOT_AFTER)
_TO = re.compile(_CUE + _MINUTE + r"(?:\s+minutes?)?\s+(?P<dir>to|till|before)\s+" + _HOUR + r"\b" + _NOT_AFTER)
_TO_ALONE = re.compile(_OWN_CLAUSE + _MINUTE + r"\s+(?P<dir>to)\s+" + _HOUR + _END)  # "correction, five to nine."
_HALF = re.compile(r"(?:" + _CUE + r"|" + _OWN_CLAUSE + r")half\s+" + _HOUR + r"\b" + _NOT_AFTER)  # half past
_OCLOCK = re.compile(r"\b" + _HOUR + r"\s+o['’]?\s*clock\b")
_AT_HOUR = re.compile(r"\bat\s+" + _HOUR + _END)
# "moxi at noon": 1200 on any clock; "Midnight vitals, pulse ninety", "Midnight, pulse ninety": the readings' time
_NOON = re.compile(_CUE + r"(?P<noon>noon|midday|midnight)\b|"
                   r"\b(?P<noon_set>noon|midday|midnight)(?=\s+(?:vitals|checks?|obs|set|reassessment|rounds)\b|,)")
# what every pattern above needs: a sentence without it (most) is passed over in one scan
_MAYBE = re.compile(r"\b(?:past|after|half|clock|noon|midday|midnight)\b|\b(?:to|till|before|at)\s+(?:1[0-2]|[1-9]|"
                    + "|".join(_HOURS) + r")\b")
# a reading's words: a number after them is the reading, not a time (context.py reads "pulse at one twenty" so too)
READING_WORDS = r"pulse|hr|heart\s+rate|bp|pressure|systolic|sats?|spo2|resps?|rr|rate|pain|temp|temperature"
_READING_BEFORE = re.compile(r"\b(?:" + READING_WORDS + r"|gcs|score)\b[^,.;]*$")


def clock_words(lower: str, start: int, end: int, now_hhmm: str) -> Iterator[tuple[str, int, int]]:
    """(HHMM, start, end) of every watch-face time said in lower[start:end], read against the clock `now_hhmm`."""
    if not _MAYBE.search(lower, start, end):
        return
    taken: list[tuple[int, int]] = []
    for pattern in (_PAST, _TO, _TO_ALONE, _HALF, _OCLOCK, _AT_HOUR, _NOON):
        for match in pattern.finditer(lower, start, end):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            if pattern is _NOON:
                taken.append((match.start(), match.end()))
                yield "0000" if "midnight" in (match.group("noon"), match.group("noon_set")) else "1200", \
                    match.start(), match.end()
                continue
            alone = pattern in (_AT_HOUR, _TO_ALONE)
            if alone and _READING_BEFORE.search(lower, max(start, match.start() - 40), match.start()):
                continue
            hour = _number(match.group("hour"), _HOURS)
            minute = 30 if pattern is _HALF else _minute(match)
            if minute is None or minute > 59:
                continue
            if match.groupdict().get("dir") in ("to", "till", "before"):
                hour, minute = hour - 1 or 12, 60 - minute
            taken.append((match.start(), match.end()))
            yield _nearest(hour % 12 * 60 + minute, now_hhmm), match.start(), match.end()


def _minute(match: re.Match[str]) -> int | None:
    said = match.groupdict().get("minute")
    if said is None:
        return 0
    return _number(re.sub(r"\s+", " ", said), _MINUTES)


def _number(said: str, words: dict[str, int]) -> int:
    return int(said) if said.isdigit() else words[said]


def _nearest(minutes_on_dial: int, now_hhmm: str) -> str:
    """The 24-hour reading of a 12-hour dial time nearest the clock `now_hhmm`."""
    readings = (shifted("0000", minutes_on_dial), shifted("1200", minutes_on_dial))
    return min(readings, key=lambda hhmm: min(minutes_ahead(hhmm, now_hhmm), minutes_ahead(now_hhmm, hhmm)))


def minutes_ahead(hhmm: str, now_hhmm: str) -> int:
    """How far a clock time is ahead of another, 0-1439 minutes (a time just past is far ahead)."""
    return (int(hhmm[:2]) * 60 + int(hhmm[2:]) - int(now_hhmm[:2]) * 60 - int(now_hhmm[2:])) % (24 * 60)


def local_hhmm(ts: float, utc_offset_min: int) -> str:
    minutes = int((ts // 60 + utc_offset_min) % (24 * 60))
    return f"{minutes // 60:02d}{minutes % 60:02d}"


def shifted(hhmm: str, minutes: float) -> str:
    total = (int(hhmm[:2]) * 60 + int(hhmm[2:]) + round(minutes)) % (24 * 60)
    return f"{total // 60:02d}{total % 60:02d}"
