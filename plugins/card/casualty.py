"""Casualty switching: "casualty two", "patient number 3", "back to casualty one", "next patient".

The plugin keeps no state: the request says which casualty is current, and each
switch said in the transcript becomes an event and the current casualty for what
follows it. "next patient" / "next casualty" is the current number plus one.
"casualty collection point" and "casualty is alert" switch nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tcccd.plugins.card.sentences import Sentence, numbers_in

_NAMED = re.compile(r"\b(?:back\s+to\s+)?(?:casualty|patient|pt)\s+(?:number\s+|#\s*)?(?=\w)")
_NEXT = re.compile(r"\bnext\s+(?:casualty|patient)\b")
MAX_CASUALTY = 999


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
    yield from sorted(found, key=lambda w: w.start)
