"""What was given and how: medications, fluids and blood products, IV/IO access; amounts and routes.

Amounts: the ASR's number step already writes most doses as digits and unit
symbols ("one gram of TXA" -> "1 g TXA"); units it leaves as words ("one unit of
whole blood") are read here. A route is only an abbreviation or word a medic
says for it; "IN" counts only in capitals, never the word "in". A drug's or
fluid's dose is the amount said right before it ("1 g TXA") or after it
("ketamine 50 mg"), and its route one said in its own stretch of the sentence, so
that two items in one sentence never swap doses or routes. A drug named twice in
a row ("fentanyl 800 mcg OTFC") is one administration; a medication's class is
the DD 1380 one (analgesic, antibiotic, other).

Access: "IV" is access only when said as access ("IV access", "18 gauge IV in
the right arm", "IO in the sternum"); after a drug or a fluid it is that item's
route ("1 g TXA IV").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tcccd.plugins.card.finding import Finding, regions, said, spanning
from tcccd.plugins.card.lexicon import (
    ACCESS,
    ACCESS_CUES_AFTER,
    ACCESS_DEVICES,
    ACCESS_SITES,
    FLUIDS,
    MEDICATIONS,
    ROUTES,
    pattern,
)
from tcccd.plugins.card.sentences import Sentence, numbers_in
from tcccd.wire.card_events import Access, Fluid, Medication

_UNIT_WORDS = {"g": "g", "gram": "g", "grams": "g", "mg": "mg", "milligram": "mg", "milligrams": "mg",
               "mcg": "mcg", "microgram": "mcg", "micrograms": "mcg", "ug": "mcg", "ml": "mL", "milliliter": "mL",
               "milliliters": "mL", "millilitre": "mL", "millilitres": "mL", "cc": "mL", "ccs": "mL", "l": "L",
               "liter": "L", "liters": "L", "litre": "L", "litres": "L", "unit": "unit", "units": "unit",
               "mg/kg": "mg/kg"}
_UNIT = re.compile(r"\s*(?P<unit>" + "|".join(sorted((re.escape(u) for u in _UNIT_WORDS), key=len, reverse=True))
                   + r")(?![\w/])(?:\s+of\b)?", re.IGNORECASE)
_ROUTE = pattern(ROUTES)
_ITEM = pattern([f for f in [*FLUIDS, *MEDICATIONS] if f not in ROUTES])  # OTFC is fentanyl's route too
_ACCESS = pattern(ACCESS)
_CUE_AFTER = re.compile(r"\s+(?:" + "|".join(re.escape(c) for c in ACCESS_CUES_AFTER) + r")\b")
_CUE_BEFORE = re.compile(r"(?:gauge|placed|started|established|inserted|got|an|two|2)\s+$")
_SITE = pattern(ACCESS_SITES)
_FLUID = pattern(FLUIDS)
_NOT_FLUID = re.compile(r"\s+lock\b")
_DRUG = pattern(MEDICATIONS)


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


def access(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_ACCESS):
        form = said(match)
        cued = (_CUE_AFTER.match(s.lower, match.end(), s.end) or _CUE_BEFORE.search(s.lower, s.start, match.start())
                or form in ACCESS_DEVICES)
        if not cued:
            continue
        clause_start, clause_end = s.clause_of(match.start())
        site = next(s.find(_SITE, match.end(), clause_end), None)
        place = next(iter(regions(s, match.end(), clause_end)), None)
        spans = [(match.start(), match.end())]
        if site:
            name, spans = ACCESS_SITES[said(site)], spans + [(site.start(), site.end())]
        elif place:
            name, spans = place.name, spans + [(place.start, place.end)]
        else:
            name = None
        yield spanning(Access(access=ACCESS[form], site=name), "access.site" if name else "access", *spans)


def fluids(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_FLUID):
        if _NOT_FLUID.match(s.lower, match.end(), s.end):
            continue
        product, blood = FLUIDS[said(match)]
        scope_start, scope_end = item_scope(s, match.start(), match.end())
        volume = nearest_amount([a for a in amounts(s, scope_start, scope_end) if a.unit in ("mL", "L", "unit")],
                                match.start(), match.end())
        way = route(s, match.end(), scope_end) or route(s, scope_start, match.start())
        spans = [(match.start(), match.end())]
        spans += [(volume.start, volume.end)] if volume else []
        spans += [(way[1], way[2])] if way else []
        yield spanning(Fluid(product=product, blood=blood, volume=volume.value if volume else None,
                             unit=volume.unit if volume else None, route=way[0] if way else None), "fluid", *spans)


def medications(s: Sentence) -> Iterator[Finding]:
    found: list[Finding] = []
    for match in s.find(_DRUG):
        name, drug_class = MEDICATIONS[said(match)]
        if found and found[-1].what.name == name and s.clause_of(found[-1].start) == s.clause_of(match.start()):
            continue
        scope_start, scope_end = item_scope(s, match.start(), match.end())
        dose = nearest_amount([a for a in amounts(s, scope_start, scope_end) if a.unit not in ("L",)],
                              match.start(), match.end())
        way = route(s, match.start(), scope_end) or route(s, scope_start, match.start())
        spans = [(match.start(), match.end())]
        spans += [(dose.start, dose.end)] if dose else []
        spans += [(way[1], way[2])] if way else []
        found.append(spanning(Medication(name=name, drug_class=drug_class, dose=dose.value if dose else None,
                                         unit=dose.unit if dose else None, route=way[0] if way else None),
                              "medication", *spans))
    yield from found
