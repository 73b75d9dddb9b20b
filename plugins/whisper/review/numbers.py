"""Inverse normalisation: numbers, doses, vitals and times written as a medic writes them on a TCCC card.

tiny.en writes some numbers as words ("ninety two percent") and some as digits
("92 percent", "09:15"); a record needs one form: "92%", "0915", "120/80",
"1 g TXA", "4 mg". This step only rewrites a number in a context that says what
it is (a unit, "percent", "over", a vital sign, a clock time); a number word
anywhere else ("one of the casualties", "a second tourniquet") is left alone.

It never adds content: every digit it writes comes from a number heard, and the
only words it writes are unit symbols for unit words heard ("grams" -> "g").
Decisions: "09:15" becomes "0915" (a 24-hour time, as DD-1380 writes times);
"9:15" and tiny.en's "0.515" (its rendering of "zero nine fifteen") are left as
heard, since either would need a digit or a reading the audio did not give.
"oh" is not read as zero. Number words are parsed by textnorm's scoring parser.

Some rewrites also decide how heard pieces group into one number: "100 and 10"
-> 110, "0-9-15" or "0, 9, 15" after "at" -> 0915. Each rewrite carries its
`reading`: the heard span with every number written in digits the way Whisper
writes them ("110", "120 over 80", "1 gram of"), so the stage can ask the
decoder whether the audio supports that grouping at least as well as what it
wrote (audio_check.py); the medic's spelling ("1 g", "120/80") is applied on
top of an accepted reading and changes no digit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcccd.plugins.whisper.review.textnorm import NUMBER_WORDS, digits_of

UNITS = {"gram": "g", "grams": "g", "milligram": "mg", "milligrams": "mg", "microgram": "mcg",
         "micrograms": "mcg", "milliliter": "mL", "milliliters": "mL", "millilitre": "mL", "millilitres": "mL",
         "kilogram": "kg", "kilograms": "kg"}  # not litres: tiny.en writes "liter" for "litter"
VITAL_CUES = ("heart rate", "pulse", "pulse rate", "respiratory rate", "respirations", "respiration rate",
              "breathing rate", "gcs", "pulse ox", "spo2", "saturation", "sats", "sat", "temperature")
_TOKEN = re.compile(r"\d+(?:[.:/]\d+)*%?|[A-Za-z]+(?:'[A-Za-z]+)?")
_CLOCK = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
# a number before one of these is not a clock time: the unit words, and the symbols they are written as
_CONTEXT_WORDS = {"over", "percent", *UNITS, *(symbol.lower() for symbol in UNITS.values())}
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Rewrite:
    """One rewrite, for the audit trail: `heard` at characters [start_char, end_char) of the input."""

    heard: str
    written: str
    start_char: int
    end_char: int
    rule: str  # "time", "ratio", "percent", "dose" or "vital"
    reading: str = ""  # the heard span with its numbers in Whisper's digits (what the audio check scores)


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int

    @property
    def word(self) -> str:
        return self.text.lower()


@dataclass(frozen=True)
class _Number:
    digits: str
    start: int  # index of its first token
    end: int  # index of the first token after it
    spoken: bool  # written in words, not digits


def inverse_normalize(text: str) -> tuple[str, list[Rewrite]]:
    """`text` with numbers written as a medic writes them, and each rewrite made, in order."""
    tokens = [_Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    rewrites: list[Rewrite] = []
    i = 0
    while i < len(tokens):
        found = _rewrite_at(text, tokens, i)
        if found is None:
            i += 1
            continue
        rewrite, i = found
        rewrites.append(rewrite)
    while True:
        out, placed = _applied(text, rewrites)
        joining = [r for r, (start, end) in zip(rewrites, placed, strict=True)
                   if r.rule == "vital" and _beside_digit_group(out, start, end)]
        if not joining:
            return out, rewrites
        rewrites = [r for r in rewrites if r not in joining]


def _applied(text: str, rewrites: list[Rewrite]) -> tuple[str, list[tuple[int, int]]]:
    """`text` with the rewrites made, and where each one's written form sits in it."""
    pieces, placed, at, shift = [], [], 0, 0
    for rewrite in rewrites:
        pieces += [text[at:rewrite.start_char], rewrite.written]
        start = rewrite.start_char + shift
        placed.append((start, start + len(rewrite.written)))
        shift += len(rewrite.written) - (rewrite.end_char - rewrite.start_char)
        at = rewrite.end_char
    return "".join(pieces) + text[at:], placed


def _beside_digit_group(out: str, start: int, end: int) -> bool:
    """A vital sign written in digits at out[start:end] sits right beside a digit group of the output ("pulse 0,
    0 0"): read again, the run would be one time. Such a number stays in the words it was heard in."""
    tokens = [_Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(out)]
    for k, token in enumerate(tokens):
        if not (token.text.isdigit() and len(token.text) <= 3) or _word(tokens, k + 1) in _CONTEXT_WORDS:
            continue
        if token.end <= start and not out[token.end:start].strip(" -,"):
            return True
        if token.start >= end and not out[end:token.start].strip(" -,"):
            return True
    return False


def _rewrite_at(text: str, tokens: list[_Token], i: int) -> tuple[Rewrite, int] | None:
    """The rewrite of the number that starts at token i, and the index after it; None if it stays as heard."""
    if _inside_number(text, tokens, i):
        return None  # the tail of a number left as heard ("four hundred eighty over eighty" is not "80/80")
    clock = _CLOCK.fullmatch(tokens[i].text)
    if clock and not _CONTEXT_WORDS.intersection({_word(tokens, i + 1)}):
        return _make(text, tokens, i, i + 1, clock.group(1) + clock.group(2), "time", [])
    split_time = _split_time_at(text, tokens, i)
    if split_time is not None:
        return _make(text, tokens, i, split_time.end, split_time.digits, "time", [split_time])
    number = _number_at(text, tokens, i)
    if number is None:
        return None
    after = number.end
    if _word(tokens, after) == "over":
        below = _number_at(text, tokens, after + 1)
        if below is not None and _joined(text, tokens, after, after + 1) and _is_pressure(number, below):
            return _make(text, tokens, i, below.end, f"{number.digits}/{below.digits}", "ratio", [number, below])
    if _word(tokens, after) == "percent" and _joined(text, tokens, after - 1, after):
        return _make(text, tokens, i, after + 1, f"{number.digits}%", "percent", [number])
    if _word(tokens, after) == "to" and _joined(text, tokens, after - 1, after + 1):
        upper = _number_at(text, tokens, after + 1)
        if upper is not None and UNITS.get(_word(tokens, upper.end) or "") and _joined(text, tokens, upper.end - 1,
                                                                                        upper.end):
            return _dose(text, tokens, number, upper)
    if UNITS.get(_word(tokens, after) or "") and _joined(text, tokens, after - 1, after):
        return _dose(text, tokens, number, None)
    if number.spoken and _is_time(tokens, i, number):
        return _make(text, tokens, i, after, number.digits, "time", [number])
    if (number.spoken or number.end - number.start > 1) and _follows_vital_cue(tokens, i):
        return _make(text, tokens, i, after, number.digits, "vital", [number])
    return None


def _dose(text: str, tokens: list[_Token], number: _Number, upper: _Number | None) -> tuple[Rewrite, int]:
    """'one gram of TXA' -> '1 g TXA'; 'two to three milligrams' -> '2 to 3 mg' (a range)."""
    last = upper or number
    after = last.end
    unit = UNITS[tokens[after].word]
    end = after + 1
    if _word(tokens, end) == "of" and end + 1 < len(tokens) and _joined(text, tokens, after, end + 1):
        end += 1  # "one gram of TXA" -> "1 g TXA"
    amount = number.digits if upper is None else f"{number.digits} to {upper.digits}"
    written = f"{amount} {unit}" + (" " if end > after + 1 else "")
    span_end = tokens[end].start if end > after + 1 else tokens[after].end
    numbers = [number] if upper is None else [number, upper]
    start = tokens[number.start].start
    return Rewrite(text[start:span_end], written, start, span_end, "dose",
                   _reading(text, tokens, start, span_end, numbers)), end


def _split_time_at(text: str, tokens: list[_Token], i: int) -> _Number | None:
    """'at 0-9-15', 'at 0 9 15', 'at 0, 9, 15': digit groups the model wrote apart that read as one 24-hour time
    (four digits, every one of them heard); after 'at', or led by a zero."""
    end = i
    while end < len(tokens) and tokens[end].text.isdigit() and len(tokens[end].text) <= 3 \
            and (end == i or not text[tokens[end - 1].end:tokens[end].start].strip(" -,")) \
            and _word(tokens, end + 1) not in _CONTEXT_WORDS:  # "12 percent" is a number of its own
        end += 1
    digits = "".join(t.text for t in tokens[i:end])
    after_at = i > 0 and tokens[i - 1].word == "at"
    if i > 0 and tokens[i - 1].text.isdigit() and not text[tokens[i - 1].end:tokens[i].start].strip(" -,"):
        return None  # the middle of a longer run of digit groups ("0-0-5-15"): not a time of its own
    if end - i < 2 or len(digits) != 4 or int(digits[:2]) > 23 or int(digits[2:]) > 59:
        return None
    if not (after_at or tokens[i].text.startswith("0")) or _word(tokens, end) in _CONTEXT_WORDS:
        return None
    return _Number(digits, i, end, spoken=False)


def _number_at(text: str, tokens: list[_Token], i: int) -> _Number | None:
    """A number starting at token i: digits ("100 and 10" joined), or a run of number words ("one hundred and
    ten"), with an optional 'point' part."""
    if i >= len(tokens):
        return None
    if _PLAIN_NUMBER.fullmatch(tokens[i].text):
        if _and_follows(text, tokens, i, int(float(tokens[i].text)) if tokens[i].text.isdigit() else 1):
            low = tokens[i + 2].text
            return _Number(str(int(tokens[i].text) + int(low)), i, i + 3, spoken=False)
        return _Number(tokens[i].text, i, i + 1, spoken=False)
    end = i
    while end < len(tokens) and (tokens[end].word in NUMBER_WORDS or _scale_and(tokens, end)) \
            and (end == i or _joined(text, tokens, end - 1, end)):
        end += 1
    if end == i or tokens[i].word in ("hundred", "thousand"):
        return None
    digits = digits_of([t.word for t in tokens[i:end]])
    if _word(tokens, end) == "point" and end + 1 < len(tokens) and tokens[end + 1].word in NUMBER_WORDS \
            and _joined(text, tokens, end - 1, end + 1):
        fraction_end = end + 1
        while fraction_end < len(tokens) and tokens[fraction_end].word in NUMBER_WORDS \
                and _joined(text, tokens, fraction_end - 1, fraction_end):
            fraction_end += 1
        fraction = digits_of([t.word for t in tokens[end + 1:fraction_end]])
        return _Number(f"{digits}.{fraction}", i, fraction_end, True)
    return _Number(digits, i, end, spoken=True)


def _inside_number(text: str, tokens: list[_Token], i: int) -> bool:
    if i == 0 or not _joined(text, tokens, i - 1, i):
        return False
    before = tokens[i - 1]
    digits = before.text[0].isdigit() and tokens[i].text[0].isdigit()  # "0 09:15", as "zero 09:15" is
    return before.word in NUMBER_WORDS or _scale_and(tokens, i - 1) or digits


def _and_follows(text: str, tokens: list[_Token], i: int, value: int) -> bool:
    """'100 and 10': a whole hundred, 'and', and a number under a hundred, nothing between them."""
    return value >= 100 and value % 100 == 0 and _word(tokens, i + 1) == "and" and i + 2 < len(tokens) \
        and tokens[i + 2].text.isdigit() and int(tokens[i + 2].text) < 100 and _joined(text, tokens, i, i + 2)


def _scale_and(tokens: list[_Token], k: int) -> bool:
    """The 'and' of 'one hundred and ten': after a scale word, before a number word that is not one."""
    return tokens[k].word == "and" and k > 0 and tokens[k - 1].word in ("hundred", "thousand") \
        and k + 1 < len(tokens) and tokens[k + 1].word in NUMBER_WORDS \
        and tokens[k + 1].word not in ("hundred", "thousand")


def _is_pressure(systolic: _Number, diastolic: _Number) -> bool:
    """'one twenty over eighty' is a blood pressure; 'one over two' is not rewritten."""
    try:
        high, low = float(systolic.digits), float(diastolic.digits)
    except ValueError:
        return False
    return 20 <= low <= high <= 300


def _is_time(tokens: list[_Token], i: int, number: _Number) -> bool:
    """'zero nine fifteen', or 'at fourteen thirty': four digits that read as a 24-hour clock time."""
    digits = number.digits
    if len(digits) != 4 or not digits.isdigit() or int(digits[:2]) > 23 or int(digits[2:]) > 59:
        return False
    led_by_zero = tokens[i].word == "zero"
    after_at = i > 0 and tokens[i - 1].word == "at" and number.end - i >= 2
    return led_by_zero or after_at


def _follows_vital_cue(tokens: list[_Token], i: int) -> bool:
    """'heart rate one twenty', 'pulse is one ten': the number right after a vital sign (and an optional 'is')."""
    before = [t.word for t in tokens[max(0, i - 3):i]]
    if before and before[-1] in ("is", "of", "at"):
        before = before[:-1]
    joined = " ".join(before)
    return any(joined == cue or joined.endswith(" " + cue) for cue in VITAL_CUES)


def _joined(text: str, tokens: list[_Token], a: int, b: int) -> bool:
    """Tokens a..b exist and are separated by spaces or hyphens only (no comma or full stop between them): a
    partial result may end on "two to", with no token after it."""
    return b < len(tokens) and all(not text[tokens[k].end:tokens[k + 1].start].strip(" -") for k in range(a, b))


def _word(tokens: list[_Token], i: int) -> str | None:
    return tokens[i].word if i < len(tokens) else None


def _make(text: str, tokens: list[_Token], i: int, end: int, written: str, rule: str,
          numbers: list[_Number]) -> tuple[Rewrite, int] | None:
    start, stop = tokens[i].start, tokens[end - 1].end
    rewrite = Rewrite(text[start:stop], written, start, stop, rule, _reading(text, tokens, start, stop, numbers))
    return (rewrite, end) if rewrite.heard != written else None


def _reading(text: str, tokens: list[_Token], start: int, stop: int, numbers: list[_Number]) -> str:
    """text[start:stop] with each number's words or digit pieces replaced by its digits, the rest as heard."""
    out, at = [], start
    for number in numbers:
        first, last = tokens[number.start].start, tokens[number.end - 1].end
        out += [text[at:first], number.digits]
        at = last
    return "".join(out) + text[at:stop]
