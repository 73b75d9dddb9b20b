"""A transcript cut into sentences and clauses, with positions kept, and the numbers said in it.

Every rule reads one sentence at a time and reports character positions in the
transcript's text, so that each event can name the exact words it came from.
Sentences end at . ! ? ; (not a decimal point); clauses end at commas and "but".
A spoken time belongs to its sentence, a negation to its clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tcccd.plugins.card.lexicon import DIGIT_WORDS

_SENTENCE_END = re.compile(r"(?<!\d)[.!?;]+(?=\s|$)|(?<=\d)[.!?;]+(?=\s|$)")
_CLAUSE_END = re.compile(r",|\s+but\s+|\s+-\s+|:")
_NUMBER_WORD = (r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                r"hundred|thousand")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?!\w)|(?<![\w-])((?:" + _NUMBER_WORD + r")(?:(?:\s+|-)(?:and\s+)?(?:"
                    + _NUMBER_WORD + r"))*)(?![\w-])", re.IGNORECASE)
_CASE_SENSITIVE = {"in", "im", "po", "sl", "io", "iv", "tq", "hr", "rr", "lr", "ns", "sat", "cat"}


@dataclass(frozen=True)
class Number:
    value: float | None  # None: digits said one by one ("one two three four"), not one number
    start: int
    end: int
    digits: str = field(default="", compare=False)  # the number as a digit string ("1234" for "one two three four")


@dataclass
class Sentence:
    """Characters [start, end) of `text`; `lower` is the whole text in lower case, for matching."""

    text: str
    lower: str
    start: int
    end: int
    clauses: list[tuple[int, int]]

    @property
    def words(self) -> str:
        return self.text[self.start:self.end]

    def find(self, pattern: re.Pattern[str], start: int | None = None, end: int | None = None) -> Iterator[re.Match]:
        """Matches of a lower-case pattern inside this sentence (or part of it); abbreviations that are also common
        words ("in", "im", "cat") count only when written in capitals, as the ASR writes the abbreviation."""
        for match in pattern.finditer(self.lower, self.start if start is None else start,
                                      self.end if end is None else end):
            said = self.text[match.start():match.end()]
            if said.lower() in _CASE_SENSITIVE and not said.isupper():
                continue
            yield match

    def clause_of(self, pos: int) -> tuple[int, int]:
        for start, end in self.clauses:
            if start <= pos < end:
                return start, end
        return self.clauses[-1]

    def numbers(self, start: int | None = None, end: int | None = None) -> list[Number]:
        return numbers_in(self.text, self.start if start is None else start, self.end if end is None else end)


def split(text: str) -> list[Sentence]:
    lower = text.lower()
    sentences: list[Sentence] = []
    cursor = 0
    for match in _SENTENCE_END.finditer(text):
        _add(sentences, text, lower, cursor, match.start())
        cursor = match.end()
    _add(sentences, text, lower, cursor, len(text))
    return sentences


def _add(sentences: list[Sentence], text: str, lower: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    if start >= end:
        return
    clauses = []
    cursor = start
    for match in _CLAUSE_END.finditer(lower, start, end):
        clauses.append((cursor, match.start()))
        cursor = match.end()
    clauses.append((cursor, end))
    sentences.append(Sentence(text, lower, start, end, [c for c in clauses if c[1] > c[0]] or [(start, end)]))


def numbers_in(text: str, start: int, end: int) -> list[Number]:
    """Numbers said between two positions: digits as written, or number words read by text2num."""
    found = []
    for match in NUMBER.finditer(text, start, end):
        if match.group(1) is not None:
            found.append(Number(float(match.group(1)), match.start(), match.end(), match.group(1)))
            continue
        value, digits = words_value(match.group(2)), digit_string(match.group(2))
        if value is not None or digits:
            found.append(Number(value, match.start(), match.end(), digits or ""))
    return found


def words_value(words: str) -> float | None:
    """'twenty four' -> 24; None when the words are not one number ('one two three four')."""
    from text_to_num import text2num

    try:
        return float(text2num(re.sub(r"\s+", " ", words.lower().replace("-", " ")), "en"))
    except ValueError:
        return None


def digit_string(words: str) -> str | None:
    """'five five six seven' -> '5567' (digits said one by one); None when a word is not a single digit."""
    parts = re.split(r"[\s-]+", words.lower().strip())
    digits = [DIGIT_WORDS.get(p) for p in parts]
    return "".join(d for d in digits if d) if all(digits) else None
