"""Numbers in a form nobody says, where a time, dose or reading is expected: read again on the audio.

tiny.en writes "zero nine twenty two" after "at" as "0.922", "zero nine
fifteen" as "0.515", a pulse of "one thirty" as "1 30", "one forty" as "1-4-D"
and "zero eight forty" as "0.84d". None of these is a time or a quantity, and
nothing marked them: the card took them as heard. Each such number is read
again, in one teacher-forced pass over its segment (audio_check.py):

- readings from the pieces heard: the digits joined ("0922", "130"), a "D"
  after a digit read as the "-ty" it was ("1-4-D" -> 140, "0.84d" -> 0840),
  "hundred" as two zeros ("0.6 hundred" -> 0600), an ordinal ending dropped
  ("28th" -> 28);
- the decoder's own reading of the place in digits only (greedy, allowed
  nothing but digit tokens: it may read "0915" where it wrote "0.515"), a time
  of three digits led by a zero, and each reading's sound-alike twin
  (number_twins.py): offered, never written, since their digits were not heard.

A reading from the pieces heard is written when the audio scores it within the
number margin of what was heard, as a grouping is (numbers.py). Unless it also
beats every other reading by the twin margin, or when none is written, the
number is listed in `uncertain` with every reading and its score, so the card
leaves it for the medic to confirm.

A time is expected after "at" or where a number run starts with a zero; a
quantity after a vital sign, before a unit or "percent", or after "over".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcccd.plugins.whisper.review.number_twins import twin_of
from tcccd.plugins.whisper.review.numbers import UNITS, VITAL_CUES

_PIECE = r"\d+(?:st|nd|rd|th|[dD])?"
# pieces joined by '.', ':', '-' or a space; by ', ' only after a piece of one or two digits ("1, 30"): a piece of
# three or more is a number of its own ("pulse 110, 0945 pulse 120" is a reading and a time)
_RUN = re.compile(rf"(?<![\w.,/:-])(?:[Zz]ero[ -])?{_PIECE}(?:(?:[.:\- ]|(?<!\d{{3}}), ){_PIECE}|-[dD])*(?: hundred)?"
                  r"(?![\w%/])")
_PARTS = re.compile(r"\d+(?:st|nd|rd|th|[dD])?|(?<=-)[dD]\b|hundred|^[Zz]ero")
_CLOCK = re.compile(r"(?:[01]?\d|2[0-3]):[0-5]\d")
_QUANTITY_AFTER = {"over", "percent", *UNITS, *(symbol.lower() for symbol in UNITS.values())}


@dataclass(frozen=True)
class FormReading:
    """A number of the reading at [start_char, end_char) in a form its context cannot hold, read again."""

    start_char: int
    end_char: int
    heard: str
    kind: str  # "time" or "quantity"
    written: str | None  # the reading written in its place, or None: kept as heard
    readings: tuple[tuple[str, float, str], ...]  # (reading, the segment's score with it, source), best first
    logprob_heard: float
    doubted: bool  # listed in `uncertain` with the readings

    @property
    def replacement(self) -> str:
        return self.written if self.written is not None else self.heard


class NumberForms:
    """Finds the numbers in a form nobody says and reads them again on a segment's audio (review.SegmentScorer)."""

    def __init__(self, tokenizer: Any, write_margin_logprob: float, doubt_margin_logprob: float) -> None:
        self.tokenizer = tokenizer
        self.write_margin = write_margin_logprob
        self.doubt_margin = doubt_margin_logprob
        # ~0.1 s, here rather than in the medic's first number; no tokenizer: a reviewer of text with no audio and
        # no decoder to read digits from (the card's text harness), whose scorer only stands in for the audio
        self._digit_ids = self._digit_tokens() if tokenizer is not None else None

    def read(self, reading: str, scorer: Any) -> list[FormReading]:
        found = broken_numbers(reading)
        if scorer is None or not found:
            return []
        candidates = [self._candidates(reading, m, kind, scorer) for m, kind in found]
        texts = [reading] + [reading[:m.start()] + c + reading[m.end():] for (m, _), (own, other) in
                             zip(found, candidates, strict=True) for c in [*own, *other]]
        heard_logprob, *rest = scorer(texts)
        totals = iter(rest)
        out = []
        for (m, kind), (own, other) in zip(found, candidates, strict=True):
            scores = {c: next(totals) for c in [*own, *other]}
            ranked = tuple(sorted(((c, scores[c], source) for c, source in {**other, **own}.items()),
                                  key=lambda item: -item[1]))
            best_own = max(own, key=scores.__getitem__, default=None)
            written = best_own if best_own is not None and \
                scores[best_own] >= heard_logprob - self.write_margin else None
            rivals = [score for c, score, _ in ranked if c != written]
            clear = written is not None and all(s < scores[written] - self.doubt_margin for s in rivals)
            out.append(FormReading(m.start(), m.end(), m.group(), kind, written, ranked, heard_logprob, not clear))
        return out

    def _candidates(self, reading: str, match: re.Match, kind: str, scorer: Any) -> tuple[dict, dict]:
        """(readings from the pieces heard, readings only offered), each reading -> where it came from."""
        joined = heard_digits(match.group())
        own = {joined: "heard"} if _holds(joined, kind) else {}
        other = {"0" + joined: "leading zero"} if kind == "time" and len(joined) == 3 and _holds("0" + joined, kind) \
            else {}
        decoded = self._decoded(reading[:match.start()].rstrip(), 4 if kind == "time" else len(joined), scorer) \
            if self._digit_ids is not None else None
        if decoded and _holds(decoded, kind):
            other.setdefault(decoded, "decoder")
        for c in [*own, *other]:
            if (t := twin_of(c)) is not None and _holds(t, kind):
                other.setdefault(t, "twin")
        return own, {c: source for c, source in other.items() if c not in own}

    def _decoded(self, before: str, digits: int, scorer: Any) -> str:
        """The decoder's own digits after `before` (in the segment's context), `digits` of them."""
        assert self._digit_ids is not None
        first, rest = self._digit_ids
        prefix = scorer.prefix + (scorer.tokens(before) if before else [])
        written: list[str] = []

        def enough(tokens: list[int]) -> bool:
            written[:] = [self.tokenizer.decode(tokens).replace(" ", "")]
            return len(written[0]) >= digits

        scorer.window.audio.continue_among(prefix, lambda step: first if step == 0 else rest, enough, digits)
        return written[0][:digits] if written and len(written[0]) >= digits else ""

    def _digit_tokens(self) -> tuple[np.ndarray, np.ndarray]:
        """Token ids that are digits only: with a leading space (a number's first token), and without."""
        pieces = {i: self.tokenizer.decode([i]) for i in range(self.tokenizer.eot)}
        spaced = [i for i, p in pieces.items() if len(p) > 1 and p[0] == " " and p[1:].isdigit()]
        bare = [i for i, p in pieces.items() if p.isdigit()]
        return np.array(spaced, dtype=np.int64), np.array(bare, dtype=np.int64)


def broken_numbers(reading: str) -> list[tuple[re.Match, str]]:
    """Each number of `reading` in a form its context cannot hold, with what the context expects there."""
    return [(m, kind) for m in _RUN.finditer(reading) if (kind := _broken(reading, m)) is not None]


def _broken(reading: str, match: re.Match) -> str | None:
    """'time' or 'quantity' when the context expects one and the number's form cannot be it; else None."""
    run = match.group()
    before = [w.strip(".,;?!") for w in reading[:match.start()].lower().split()[-3:]]
    after = [w.strip(".,;?!") for w in reading[match.end():].lower().split()[:1]]
    if (after and after[0] in _QUANTITY_AFTER) or (before and before[-1] == "over") or _after_vital_cue(before):
        kind = "quantity"
    elif (before and before[-1] == "at") or (heard_digits(run).startswith("0") and not run.isdigit()
                                              and len(heard_digits(run)) >= 3):
        kind = "time"  # "0-8-4-D" where "at" was heard as "that"; not "0.4" (a dose)
    else:
        return None
    plain = run.isdigit() or (kind == "quantity" and re.fullmatch(r"\d+\.\d+", run) is not None)
    if plain or (kind == "time" and _CLOCK.fullmatch(run)):
        return None
    return kind


def _after_vital_cue(words: list[str]) -> bool:
    if words and words[-1] in ("is", "of", "at"):
        words = words[:-1]
    joined = " ".join(words)
    return any(joined == cue or joined.endswith(" " + cue) for cue in VITAL_CUES)


def heard_digits(run: str) -> str:
    """The digits the pieces stand for: '1-4-D' -> 140, '0.84d' -> 0840, '0.6 hundred' -> 0600, '28th' -> 28."""
    out = ""
    for part in _PARTS.findall(run):
        if part in ("d", "D") or part.lower() == "zero":
            out += "0"
        elif part == "hundred":
            out += "00"
        else:
            digits = re.match(r"\d+", part).group()  # type: ignore[union-attr]
            out += digits + ("0" if part[-1] in "dD" else "")
    return out


def _holds(digits: str, kind: str) -> bool:
    """Whether `digits` is a form the context can hold: a 24-hour time HHMM, or a whole quantity."""
    if kind == "time":
        return len(digits) == 4 and int(digits[:2]) <= 23 and int(digits[2:]) <= 59
    return bool(digits) and (digits == "0" or not digits.startswith("0"))
