"""Numbers as a medic says them, read where they stand in the transcript's text.

Whisper's number step writes most numbers with a context as digits ("pulse 120",
"1 g", "0915"); it leaves others as words, or half-written ("1 oh five",
"point 4 mg"). This reader takes both and the medic's ways of saying them:
digits ("110", "0.4"); number words ("ninety eight", "a hundred and twelve");
"point four" and "zero point four" (0.4; a "point" with no whole part is 0.x);
the hundreds said in pieces as on a monitor ("one twenty" 120, "one oh five"
105, "one ten" 110); digits said one by one ("five five zero zero", kept as a
digit string, no value: a last four or a roster number, not a quantity); clock
times said in pieces ("ten twenty", "oh nine thirty") as a digit string whose
value is left out, since only the context ("at", "due at") says it is a time.

Reading is linear in the text: one pass of one pattern over the range asked for,
and a bounded parse of each run of number words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tcccd.plugins.card.fast_patterns import first_grouped

UNITS = {"zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
         "eight": 8, "nine": 9, "niner": 9}
TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
         "seventeen": 17, "eighteen": 18, "nineteen": 19}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
        "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000}
_WORDS = first_grouped([(w, w) for w in sorted([*UNITS, *TEENS, *TENS, *SCALES], key=len, reverse=True)])
_TOKEN = r"(?:\d+(?:\.\d+)?|" + _WORDS + r"|point)"
RUN = re.compile(r"(?<![\w.])(?:an?[\s-]+(?=hundred\b|thousand\b))?" + _TOKEN
                 + r"(?:[\s-]+(?:and[\s-]+)?" + _TOKEN + r")*(?:(?![\w])|(?<=\d)(?=(?:mg|mcg|g|ml|cc|kg)\b))",
                 re.IGNORECASE)  # "1g", "50mg": a unit written against its number
_PIECE = re.compile(r"\d+(?:\.\d+)?|[a-z]+", re.IGNORECASE)
_WRITTEN = re.compile(r"\d+(?:\.\d+)?")  # one piece of digits alone


@dataclass(frozen=True)
class Number:
    value: float | None  # None: digits said one by one, or a clock time said in pieces: not one quantity
    start: int
    end: int
    digits: str = field(default="", compare=False)  # as a digit string ("5500", "0930"); "" when it has none


@dataclass(frozen=True)
class _Group:
    value: int
    width: int  # digits it stands for: 1 for "five", 2 for "twenty two" or "oh five", 3 for "one hundred"
    single: bool  # one digit said alone ("five", "oh")


def iter_numbers(text: str, start: int, end: int) -> Iterator[Number]:
    """Each number said in text[start:end], in order."""
    for match in RUN.finditer(text, start, end):
        said = match.group()
        if _WRITTEN.fullmatch(said):  # most numbers: digits as the number step wrote them, read as _read reads them
            yield Number(float(said), match.start(), match.end(), said if said.isdigit() else "")
            continue
        pieces = [(m.group().lower(), match.start() + m.start()) for m in _PIECE.finditer(said)]
        yield from _read(pieces, match.start(), match.end())


def numbers_in(text: str, start: int, end: int) -> list[Number]:
    return list(iter_numbers(text, start, end))


def first_number(text: str, start: int, end: int) -> Number | None:
    return next(iter_numbers(text, start, end), None)


def _read(pieces: list[tuple[str, int]], start: int, end: int) -> Iterator[Number]:
    words = [w for w, _ in pieces if w not in ("a", "an", "and")]
    if not words or all(w in ("oh", "point") for w in words):
        return
    if words[0] == "point" or "point" in words:
        number = _decimal(words, start, end)
        if number is not None:
            yield number
        return
    if len(words) == 1 and words[0][0].isdigit():
        yield Number(float(words[0]), start, end, words[0] if words[0].isdigit() else "")
        return
    groups = _groups(words)
    if groups is None:  # not one number: each piece on its own ("5 5 6 7" is a run of four)
        for word, at in pieces:
            if word not in ("a", "an", "and", "point"):
                yield from _read([(word, at)], at, at + len(word))
        return
    yield _combined(groups, start, end)


def _decimal(words: list[str], start: int, end: int) -> Number | None:
    """'point 4', 'zero point four', '1 point 5': a whole part (0 when none was said) and digits after the point."""
    at = words.index("point")
    whole = _groups(words[:at]) if at else [_Group(0, 1, True)]
    tail = words[at + 1:]
    if whole is None or len(whole) != 1 or not tail:
        return None
    fraction = ""
    for word in tail:
        if word.isdigit():
            fraction += word
        elif word in UNITS:
            fraction += str(UNITS[word])
        else:
            return None
    value = float(f"{whole[0].value}.{fraction}")
    return Number(value, start, end, "")


def _groups(words: list[str]) -> list[_Group] | None:
    """Number words (and digit strings) cut into the pieces a medic says: 'one', 'twenty two', 'one hundred and
    five', 'oh five'; None when a word cannot start or continue one."""
    groups: list[_Group] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word.isdigit():
            groups.append(_Group(int(word), len(word), len(word) == 1))
            i += 1
        elif word in SCALES:
            if groups and groups[-1].value < 100 and (groups[-1].width == 1 or word == "hundred"):
                base = groups.pop().value * SCALES[word]  # "one hundred", "fifteen hundred", "two thousand"
            elif not groups or words[i - 1] in ("a", "an"):
                base = SCALES[word]
            else:
                return None
            i += 1
            rest, i = _below_hundred(words, i)
            groups.append(_Group(base + rest, 3 if base < 1000 else 4, False))
        elif word in TENS or word in TEENS:
            value, i = _below_hundred(words, i)
            groups.append(_Group(value, 2, False))
        elif word == "oh" and i + 1 < len(words) and _digit(words[i + 1]) is not None:
            groups.append(_Group(_digit(words[i + 1]), 2, False))  # "oh five", "1 oh 4" as the number step leaves it
            i += 2
        elif word in UNITS:
            groups.append(_Group(UNITS[word], 1, True))
            i += 1
        else:
            return None
    return groups


def _digit(word: str) -> int | None:
    """One digit said or written ("five", "5"); None for anything else ("oh" included)."""
    if word in UNITS and word != "oh":
        return UNITS[word]
    return int(word) if word.isdigit() and len(word) == 1 else None


def _below_hundred(words: list[str], i: int) -> tuple[int, int]:
    """'twenty two' / 'twelve' / 'five' / nothing, from word i: its value and the index after it."""
    if i < len(words) and words[i] in TEENS:
        return TEENS[words[i]], i + 1
    if i < len(words) and words[i] in TENS:
        value = TENS[words[i]]
        if i + 1 < len(words) and words[i + 1] in UNITS and words[i + 1] not in ("zero", "oh"):
            return value + UNITS[words[i + 1]], i + 2
        return value, i + 1
    if i < len(words) and words[i] in UNITS and words[i] not in ("zero", "oh"):
        return UNITS[words[i]], i + 1
    return 0, i


def _combined(groups: list[_Group], start: int, end: int) -> Number:
    """One number from its spoken pieces."""
    digits = "".join(str(g.value).zfill(g.width) for g in groups)
    if len(groups) == 1:
        return Number(float(groups[0].value), start, end, digits)
    if all(g.single for g in groups):
        return Number(None, start, end, digits)  # digit by digit: an identifier, not a quantity
    first, rest = groups[0], groups[1:]
    if len(rest) == 1 and first.single and 1 <= first.value <= 9 and rest[0].width == 2:
        return Number(float(first.value * 100 + rest[0].value), start, end, digits)  # "one twenty", "one oh five"
    return Number(None, start, end, digits)  # "ten twenty", "oh nine thirty": a time, when its context says so
