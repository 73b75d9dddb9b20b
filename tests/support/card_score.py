"""Cards compared field by field: precision and recall by DD 1380 section and by class, and invented clinical facts.

A field is one line of tests/support/card_fields.py's notation; notes (G) are not scored, as the corpus says.
Found: on the card and expected; extra: on the card, not expected (a wrong value, a flag missed, a fact nobody
said); missed: expected, not on the card.

An **invented clinical fact** is stricter than an extra field: a field the card holds for something the medic
did not assert as done or observed, whatever its value. It is a field whose name (the casualty, section, item and
attribute, without its value, its unconfirmed mark or its vitals column) names nothing of the expected card:
TXA on a card where no TXA was given, a route where none was said, a reading of a kind nobody reported, anything
on a card that must stay empty. A wrong value of something said ("ketamine 25 mg" for 50) is an extra field, not
an invented fact; a second item where one was said (`medication[TXA#2]`) is invented.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

NOTE = re.compile(r"c\d+ g note\b", re.IGNORECASE)


def name_of(line: str) -> str:
    """A field without its value, its mark and its vitals column: 'c1 c vitals[].pulse'."""
    name = line.partition(" = ")[0]
    return re.sub(r"vitals\[[^\]]*\]", "vitals[]", name)


def invented(got: set[str], expected: set[str]) -> set[str]:
    names = {name_of(line) for line in expected}
    return {line for line in got if name_of(line) not in names}


def scored(lines: set[str]) -> set[str]:
    """The fields that are scored: every one but the notes (G), which hold the medic's words, not a field."""
    return {line for line in lines if not NOTE.match(line)}


def section_of(line: str) -> str:
    return line.split()[1].upper()


@dataclass
class Counts:
    found: int = 0
    extra: int = 0
    missed: int = 0
    invented: int = 0

    def precision(self) -> float:
        return self.found / (self.found + self.extra) if self.found + self.extra else 1.0

    def recall(self) -> float:
        return self.found / (self.found + self.missed) if self.found + self.missed else 1.0


@dataclass
class Score:
    """Counts overall, by section and by class; the lines behind them kept per case (printed only when asked)."""

    all: Counts = field(default_factory=Counts)
    by_section: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    by_class: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    cases: int = 0
    exact: int = 0
    errors: int = 0
    failures: list[tuple[str, str, list[str], list[str], list[str]]] = field(default_factory=list)

    def add(self, case_id: str, klass: str, got: set[str], expected: set[str]) -> None:
        got, expected = scored(got), scored(expected)
        made_up = invented(got, expected)
        self.cases += 1
        self.exact += got == expected
        for lines, attr in ((got & expected, "found"), (got - expected, "extra"), (expected - got, "missed"),
                            (made_up, "invented")):
            for line in lines:
                for counts in (self.all, self.by_section[section_of(line)], self.by_class[klass]):
                    setattr(counts, attr, getattr(counts, attr) + 1)
        if got != expected:
            self.failures.append((case_id, klass, sorted(made_up), sorted(got - expected - made_up),
                                  sorted(expected - got)))

    def error(self, case_id: str, klass: str, reason: str) -> None:
        """A case the pipeline could not run (counted; its words are not printed)."""
        self.cases += 1
        self.errors += 1
        self.failures.append((case_id, klass, [], [], [f"ERROR {reason}"]))

    def summary(self) -> dict:
        def counts(c: Counts) -> dict:
            return {"precision": c.precision(), "recall": c.recall(), "found": c.found, "extra": c.extra,
                    "missed": c.missed, "invented": c.invented}

        return {"cases": self.cases, "exact": self.exact, "errors": self.errors, **counts(self.all),
                "by_section": {s: counts(c) for s, c in sorted(self.by_section.items())},
                "by_class": {k: counts(c) for k, c in sorted(self.by_class.items())}}
