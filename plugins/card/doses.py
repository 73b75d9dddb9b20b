"""Amounts and routes: '1 g', '800 mcg', '500 mL', 'one unit', 'two liters'; IV, IO, IM, PO, IN, OTFC.

The ASR's number step already writes most doses as digits and unit symbols
("one gram of TXA" -> "1 g TXA"); units it leaves as words ("one unit of whole
blood", "a liter") are read here. A route is only an abbreviation or word a medic
says for it; "IN" counts only in capitals, never the word "in".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcccd.plugins.card.finding import said
from tcccd.plugins.card.lexicon import FLUIDS, MEDICATIONS, ROUTES, pattern
from tcccd.plugins.card.sentences import Sentence, numbers_in

_UNIT_WORDS = {"g": "g", "gram": "g", "grams": "g", "mg": "mg", "milligram": "mg", "milligrams": "mg",
               "mcg": "mcg", "microgram": "mcg", "micrograms": "mcg", "ug": "mcg", "ml": "mL", "milliliter": "mL",
               "milliliters": "mL", "millilitre": "mL", "millilitres": "mL", "cc": "mL", "ccs": "mL", "l": "L",
               "liter": "L", "liters": "L", "litre": "L", "litres": "L", "unit": "unit", "units": "unit",
               "mg/kg": "mg/kg"}
_UNIT = re.compile(r"\s*(?P<unit>" + "|".join(sorted((re.escape(u) for u in _UNIT_WORDS), key=len, reverse=True))
                   + r")(?![\w/])(?:\s+of\b)?", re.IGNORECASE)
_ROUTE = pattern(ROUTES)
_ITEM = pattern([f for f in [*FLUIDS, *MEDICATIONS] if f not in ROUTES])  # OTFC is fentanyl's route too


@dataclass(frozen=True)
class Amount:
    value: float
    unit: str
    start: int
    end: int


def amounts(s: Sentence, start: int, end: int) -> list[Amount]:
    """Every number followed by a unit between two positions ('500 mL', 'one unit of', 'a liter' is not read)."""
    found = []
    for number in numbers_in(s.text, start, end):
        match = _UNIT.match(s.text, number.end, end)
        if match and number.value is not None:
            found.append(Amount(number.value, _UNIT_WORDS[match.group("unit").lower()], number.start, match.end()))
    return found


def route(s: Sentence, start: int, end: int) -> tuple[str, int, int] | None:
    """The first route said between two positions, as the card writes it."""
    match = next(s.find(_ROUTE, start, end), None)
    return (ROUTES[said(match)], match.start(), match.end()) if match else None


def nearest_amount(found: list[Amount], name_start: int, name_end: int) -> Amount | None:
    """The amount said right before a name ('1 g TXA') or, failing that, the first after it ('TXA 1 g')."""
    before = [a for a in found if a.end <= name_start and name_start - a.end <= 2]
    if before:
        return before[-1]
    after = [a for a in found if a.start >= name_end]
    return after[0] if after else None


def item_scope(s: Sentence, start: int, end: int) -> tuple[int, int]:
    """Where a drug's or fluid's own dose and route can be: from the end of the item said before it to the start of
    the item said after it, within the sentence ('500 mL LR IO and 1 g TXA IV': IO is the LR's, IV the TXA's)."""
    items = [(m.start(), m.end()) for m in s.find(_ITEM)]
    before = max((e for _, e in items if e <= start), default=s.start)
    after = min((b for b, _ in items if b >= end), default=s.end)
    return before, after
