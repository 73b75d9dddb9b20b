"""A transcript cut into sentences and clauses, with positions kept, and the numbers said in it.

Every rule reads one sentence at a time and reports character positions in the
transcript's text, so that each event can name the exact words it came from.
Sentences end at . ! ? ; (not a decimal point); the mark that ended one is kept
(a question is asked with "?"). Each sentence has two cuts into clauses
(tcccd.plugins.card.clauses): `acts`, what an assertion trigger reaches, and
`clauses`, what a mention owns (its slots). A spoken time belongs to its clause,
a negation to its assertion clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tcccd.plugins.card.clauses import act_clauses, clause_at, long_runs, slot_clauses
from tcccd.plugins.card.fast_patterns import Gate
from tcccd.plugins.card.numbers import Number, first_number, numbers_in

__all__ = ["Number", "Sentence", "first_number", "numbers_in", "split"]
_SENTENCE_END = re.compile(r"[.!?;]+(?=\s|$)")
_AFTER_DOSE = re.compile(r"\d\s*(?:g|mg|mcg|ml|cc|units?)\s+$")  # "2 g iv", "15 mg po": a route, whatever its case
_WENT_IN = re.compile(r"in(?=\s*(?:[,;:.!?]|$|and\b|now\b|at\b))")  # "TXA 2 g in, no blood": it went in (not the nose)
_READINGS = ("hr", "rr", "sat")  # "hr 124", "rr 24": a reading, not "1 hr"
_NUMBER_NEXT = re.compile(r"\s+\d")
_CASE_SENSITIVE = {"in", "im", "po", "sl", "io", "iv", "hr", "rr", "lr", "ns", "sat", "cat", "cats"}
_LONGEST_CASE_SENSITIVE = max(map(len, _CASE_SENSITIVE))


@dataclass
class Sentence:
    """Characters [start, end) of `text`; `lower` is the whole text in lower case, for matching."""

    text: str
    lower: str
    start: int
    end: int
    clauses: list[tuple[int, int]]
    acts: list[tuple[int, int]] = field(default_factory=list)
    cues: list[tuple[int, int]] = field(default_factory=list)
    mark: str = ""

    @property
    def words(self) -> str:
        return self.text[self.start:self.end]

    def find(self, pattern: re.Pattern[str], start: int | None = None, end: int | None = None) -> Iterator[re.Match]:
        """Matches of a lower-case pattern inside this sentence (or part of it); abbreviations that are also common
        words ("in", "im", "cat") count only when written in capitals ("CATs" too), as the ASR writes them."""
        for match in pattern.finditer(self.lower, self.start if start is None else start,
                                      self.end if end is None else end):
            if match.end() - match.start() > _LONGEST_CASE_SENSITIVE:  # no lower-casing makes a string shorter
                yield match
                continue
            said = self.text[match.start():match.end()]
            if said.lower() in _CASE_SENSITIVE and not said.rstrip("s").isupper() and \
                    (not _AFTER_DOSE.search(self.lower, max(0, match.start() - 12), match.start())
                     or _WENT_IN.match(self.lower, match.start())) and \
                    not (said.lower() in _READINGS and _NUMBER_NEXT.match(self.lower, match.end())):
                continue
            yield match

    def clause_of(self, pos: int) -> tuple[int, int]:
        """The slot clause holding a position: where a mention's dose, route, limb, side, site and time are."""
        return clause_at(self.clauses, pos)

    def act_of(self, pos: int) -> tuple[int, int]:
        """The assertion clause holding a position."""
        return clause_at(self.acts or self.clauses, pos)

    def numbers(self, start: int | None = None, end: int | None = None) -> list[Number]:
        return numbers_in(self.text, self.start if start is None else start, self.end if end is None else end)


def split(text: str, cue: Gate | None = None) -> list[Sentence]:
    """Sentences in order; `cue` finds correction cues ("scratch that"), which no clause spans."""
    lower = text.lower()
    sentences: list[Sentence] = []
    cursor = 0
    for match in _SENTENCE_END.finditer(text):
        _add(sentences, text, lower, cursor, match.start(), match.group()[-1], cue)
        cursor = match.end()
    _add(sentences, text, lower, cursor, len(text), "", cue)
    return sentences


def _add(sentences: list[Sentence], text: str, lower: str, start: int, end: int, mark: str,
         cue: Gate | None) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return
    runs = long_runs(lower, start, end)
    for i, (a, b) in enumerate(runs):
        cues = [(m.start(), m.end()) for m in cue.finditer(lower, a, b)] if cue is not None else []
        acts = act_clauses(lower, a, b, cues)
        sentences.append(Sentence(text, lower, a, b, slot_clauses(lower, acts, cues), acts, cues,
                                  mark if i == len(runs) - 1 else ""))
