"""What was given and how: medications, fluids and blood products, IV/IO access; amounts and routes.

Amounts: the ASR's number step already writes most doses as digits and unit
symbols ("one gram of TXA" -> "1 g TXA"); units it leaves as words ("one unit of
whole blood", "a unit of plasma", "five hundred mils") are read here, and so are
a dose per weight ("1 mg per kilogram" -> 1 mg/kg) and a range ("2 to 3 mg",
kept whole, never one end: the card shows it unconfirmed). A route is only an
abbreviation or word a medic says for it; "IN" counts only in capitals, never
the word "in". A drug's or fluid's dose is the amount said right before it ("1 g
TXA", nothing between but a space) or the first after it ("ketamine 50 mg"), in
its own slot clause (tcccd.plugins.card.clauses) and before the next item: a
dose, unit or route never crosses a comma or "and" into another item ("TXA 2 g,
ketamine 50 mg"). A fluid takes the route of the line said before it only when
said to run through it ("IV in the left arm, LR running through it"). A number
said right after a drug with no unit is its dose as said ("ketamine 50 IM" ->
50). A drug named twice in a row ("fentanyl 800 mcg OTFC", "the OTFC, it's
fentanyl") is one administration; a medication's class is the DD 1380 one
(analgesic, antibiotic, other).

Access: "IV" is access only when said as access ("IV access", "18 gauge IV in
the right arm", "IO in the sternum", "IV's in"); after a drug or a fluid it is
that item's route ("1 g TXA IV"). "Two IVs, left arm and right arm" is two.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from tcccd.plugins.card.finding import Finding, regions, said, spanning
from tcccd.plugins.card.lexicon import (
    ACCESS,
    ACCESS_CUES_AFTER,
    ACCESS_PLURALS,
    ACCESS_SITES,
    FLUIDS,
    MEDICATIONS,
    ROUTES,
    pattern,
)
from tcccd.plugins.card.sentences import Number, Sentence, first_number, numbers_in
from tcccd.wire.card_events import Access, Fluid, Medication

_UNIT_WORDS = {"g": "g", "gram": "g", "grams": "g", "mg": "mg", "milligram": "mg", "milligrams": "mg",
               "mcg": "mcg", "microgram": "mcg", "micrograms": "mcg", "ug": "mcg", "ml": "mL", "milliliter": "mL",
               "milliliters": "mL", "millilitre": "mL", "millilitres": "mL", "cc": "mL", "ccs": "mL", "l": "L",
               "liter": "L", "liters": "L", "litre": "L", "litres": "L", "unit": "unit", "units": "unit",
               "mils": "mL", "mil": "mL", "mics": "mcg", "mic": "mcg", "mg/kg": "mg/kg", "mcg/kg": "mcg/kg"}
_UNIT = re.compile(r"\s*(?P<unit>" + "|".join(sorted((re.escape(u) for u in _UNIT_WORDS), key=len, reverse=True))
                   + r")(?![\w/])(?P<per>\s*(?:/\s*|per\s+|a\s+)(?:kg|kilo|kilogram|kilograms)\b)?(?:\s+of\b)?",
                   re.IGNORECASE)
_RANGE = re.compile(r"\s*(?:to|-)\s*", re.IGNORECASE)
_ONE = re.compile(r"(?<![\w-])(?P<half>half\s+)?"
                  r"(?:(?:an?|another|one\s+more|first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:full\s+|whole\s+)?|"
                  r"(?<!\w\s)(?=(?:liter|litre)\s+of\b))"  # "Liter of normal saline running": one
                  r"(?=(?:unit|liter|litre|gram|ml|mil)\b)", re.IGNORECASE)  # "first unit of plasma": one unit
# "fifty of ketamine", "five hundred Hextend", "five hundred of warm LR"
_BARE_BEFORE = re.compile(r"\s+(?:of\s+)?(?:(?:warm|warmed|cold|fresh)\s+)?$", re.IGNORECASE)
_NAMED_AGAIN = re.compile(r"\s*,?\s*(?:it['’]s|that['’]s|it\s+is|that\s+is|which\s+is)\s+(?:the\s+)?",
                          re.IGNORECASE)  # "gave him the OTFC, it's fentanyl": the same drug by its name
_SHARED = re.compile(r"\b(?:both|all(?:\s+of\s+them)?|each)\s+(?:(?:given|were|was|went|are)\s+)?")
_ROUTE = re.compile(r"(?<!nasal )" + pattern(ROUTES).pattern)  # oxygen "by nasal cannula" is no IV
_ITEM = pattern([f for f in [*FLUIDS, *MEDICATIONS] if f not in ROUTES])  # OTFC is fentanyl's route too
_ACCESS = re.compile(r"(?<!nasal )" + pattern(ACCESS).pattern)
_CUE_AFTER = re.compile(r"\s*(?:" + "|".join(re.escape(c).replace(r"\ ", r"\s+") for c in ACCESS_CUES_AFTER) + r")")
_CUE_BEFORE = re.compile(r"(?:gauge|placed|started|established|inserted|got|an|two|2|tried|attempted|missed|blew|"
                         r"lost|pulled|removed|discontinued|restarted|replaced|flushed|new|sternal|humeral|tibial)"
                         r"\s+(?:the\s+|an\s+|his\s+|her\s+)?$")
_SITE = pattern(ACCESS_SITES)
_SITE_BEFORE = re.compile(_SITE.pattern + r"(?=\s+$)")  # "the sternal IO"
_ROUTE_PUT_RIGHT = re.compile(r"\b(?:i\s+mean|correction|sorry|make\s+that|no|not)\s*,?\s*$")
# "ertapenem one gram IV is in": a route said after the dose, the drug what is in (an access is never dosed)
_DOSED = re.compile(r"(?:\d|\b(?:" + "|".join(re.escape(u) for u in _UNIT_WORDS) + r"))\s+$")
# "started a line in the left arm", "line's in": an IV line, only with an act said on it ("hold the line" is none)
_LINE = re.compile(r"\b(?:(?:start(?:ed|ing)?|got|getting|plac(?:ed|ing)|establish(?:ed|ing)?|put|putting|have|has|had|"
                   r"missed|lost|blew|blown|tried|attempted|running|ran|secured|insert(?:ed|ing)?)\s+(?:in\s+)?"
                   r"(?:(?:a|an|the|his|her|one|another|second|new|peripheral|\d+\s+gauge|large\s+bore)\s+)*"
                   r"line\b(?!\s+(?:of|up|five|one|two|three|four|six|seven|eight|nine|\d))|"
                   r"(?:\b(?:the|his|her|a)\s+|^|(?<=[,.;:?!]\s))line(?:['’]s|\s+is)\s+in\b)")
_CATHETER = re.compile(r"\b(?:14|16|18|20|22)\s*(?:-\s*)?(?:gauge|g)\s+(?=(?:in|into|to)\s+(?:the\s+|his\s+|her\s+)?"
                       r"(?:left|right)\b)")  # "18 gauge in the left AC": an IV ("14 gauge needle": none)
# "IO right humerus", "IV 18 gauge left AC": said with its site, access
_SITED = re.compile(r"(?:\s+(?:14|16|18|20|22)\s*-?\s*(?:gauge|g))?,?\s+(?:(?:left|right)\s+(?:humerus|humeral|tibia|"
                    r"tibial|arm|forearm|hand|ac|antecubital|leg|shin|wrist)|sternum|sternal)\b")
_FLUID = pattern(FLUIDS)
_NOT_FLUID = re.compile(r"\s+lock\b")
_BLOOD_MEASURED = re.compile(r"\b(?:units?|bags?|pints?|liters?|litres?|ml|cc|mils?)\s+of\s+$")
_DRUG = pattern(MEDICATIONS)
# "Cannula in, left hand, and I've got a bag of Hartmann's running through it": the fluid takes the way said before it
# only when said to run through it ("cannula's in his left hand, and I've got Hartmann's running" says no route)
_THROUGH_IT = re.compile(r"[^,;.]*?\b(?:through|into|in|via|down)\s+(?:it|that|the\s+(?:line|cannula|iv|io|port))\b")


@dataclass(frozen=True)
class Amount:
    value: float
    unit: str | None  # None: a number said with no unit
    start: int
    end: int
    upto: float | None = None  # the top of a range


def amounts(s: Sentence, start: int, end: int) -> list[Amount]:
    """Every number followed by a unit between two positions ('500 mL', 'one unit of', 'a unit of', '2 to 3 mg',
    '1 mg per kilogram')."""
    found = []
    numbers = numbers_in(s.text, start, end)
    for i, number in enumerate(numbers):
        if number.value is None or (found and number.start < found[-1].end):
            continue
        upto, after = None, number.end
        joined = _RANGE.match(s.text, number.end, end)
        if joined and i + 1 < len(numbers) and numbers[i + 1].start == joined.end() and numbers[i + 1].value:
            upto, after = numbers[i + 1].value, numbers[i + 1].end
        match = _UNIT.match(s.text, after, end)
        if match:
            unit = _UNIT_WORDS[match.group("unit").lower()]
            unit = f"{unit}/kg" if match.group("per") and not unit.endswith("/kg") else unit
            found.append(Amount(number.value, unit, number.start, match.end(), upto))
    for match in _ONE.finditer(s.text, start, end):
        unit = _UNIT.match(s.text, match.end(), end)
        if unit:
            amount = 0.5 if match.group("half") else 1.0  # "half a liter"
            found.append(Amount(amount, _UNIT_WORDS[unit.group("unit").lower()], match.start(), unit.end()))
    return sorted(found, key=lambda a: a.start)


def route(s: Sentence, start: int, end: int, last: bool = False) -> tuple[str, int, int] | None:
    """The first route said between two positions (the last, with `last`: the line a fluid runs through), as the
    card writes it."""
    found = s.find(_ROUTE, start, end)
    match = next(reversed(list(found)) if last else found, None)
    return (ROUTES[said(match)], match.start(), match.end()) if match else None


def route_before(s: Sentence, start: int, end: int) -> tuple[str, int, int] | None:
    """A route said before a drug in its scope, never across a comma and other words ("IV morphine", "IM, ketamine",
    not "Cannula in the right hand, morph ten given": a drug may go in by another way than the line said before)."""
    way = route(s, start, end)
    between = s.text[way[2]:end] if way is not None else ""
    return way if way is not None and ("," not in between or not between.strip(" ,")) else None


def nearest_amount(s: Sentence, found: list[Amount], name_start: int, name_end: int) -> Amount | None:
    """The amount said right before a name ('1 g TXA': nothing but spaces between) or, failing that, the first after
    it ('TXA 1 g')."""
    before = [a for a in found if a.end <= name_start and not s.text[a.end:name_start].strip()]
    if before:
        return before[-1]
    after = [a for a in found if a.start >= name_end]
    return after[0] if after else None


def bare_dose(s: Sentence, name_start: int, name_end: int, scope_start: int, scope_end: int) -> Amount | None:
    """A number with no unit said right after the name ('ketamine 50 IM', 'Hextend five hundred in', after a comma
    only with its route: 'the ketamine, fifty IM', never 'ketamine, 20 minutes ago') or right before it ('fifty of
    ketamine', 'five hundred Hextend'): the amount as said, with no unit."""
    number = first_number(s.text, name_end, scope_end)
    between = s.text[name_end:number.start].strip() if number is not None else None
    if number is not None and (not between or between == "," and _route_next(s, number.end, scope_end)) and \
            _bare(s, number, scope_end):  # "the ketamine, fifty IM": after a comma only with its route
        return Amount(number.value, None, number.start, number.end)  # type: ignore[arg-type]
    before = [n for n in numbers_in(s.text, scope_start, name_start)
              if _BARE_BEFORE.fullmatch(s.text, n.end, name_start)]
    if before and _bare(s, before[-1], name_start):
        return Amount(before[-1].value, None, before[-1].start, before[-1].end)  # type: ignore[arg-type]
    return None


def _route_next(s: Sentence, at: int, end: int) -> bool:
    way = route(s, at, end)
    return way is not None and not s.text[at:way[1]].strip()


def _bare(s: Sentence, number: Number, scope_end: int) -> bool:
    """A quantity said with no unit: not digits said one by one, not a clock time ('ketamine 0950')."""
    written = s.text[number.start:number.end]
    return number.value is not None and not _UNIT.match(s.text, number.end, scope_end) and \
        not (written.isdigit() and len(written) == 4)


def item_scope(s: Sentence, start: int, end: int) -> tuple[int, int]:
    """Where a drug's or fluid's own dose and route can be: its slot clause, from the end of the item said before it
    to the start of the item said after it ('500 mL LR IO 1 g TXA IV': IO is the LR's, IV the TXA's)."""
    clause_start, clause_end = s.clause_of(start)
    items = [(m.start(), m.end()) for m in s.find(_ITEM, clause_start, clause_end)]
    before = max((e for _, e in items if e <= start), default=clause_start)
    after = min((b for b, _ in items if b >= end), default=clause_end)
    return before, after


def access(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_ACCESS):
        form = said(match)
        plural, end = form in ACCESS_PLURALS, match.end()
        clause_start, clause_end = s.clause_of(match.start())
        places = regions(s, end, clause_end)
        given_before = next(s.find(_ITEM, clause_start, match.start()), None) is not None
        dosed = given_before and _DOSED.search(s.lower, clause_start, match.start())
        said_as_access = _CUE_AFTER.match(s.lower, end, s.end) and not dosed
        cued = said_as_access or plural or not given_before and (  # "LR started IV": a route
            _CUE_BEFORE.search(s.lower, s.start, match.start()) or _SITED.match(s.lower, end, clause_end))
        if not cued or _ROUTE_PUT_RIGHT.search(s.lower, max(s.start, match.start() - 16), match.start()) and \
                not s.lower[end:clause_end].strip(" ,.;") and next(s.find(_ITEM, s.start, match.start()), None):
            continue  # "Ketamine twenty IV, I mean IO": the drug's route put right, no access said
        site = next(s.find(_SITE, end, clause_end), None)
        before = [p for p in regions(s, max(clause_start, match.start() - 24), match.start())
                  if not s.lower[p.end:match.start()].strip()]  # "the right humerus IO went in"
        site = site or _SITE_BEFORE.search(s.lower, max(clause_start, match.start() - 12), match.start())
        named = [(p.name, (p.start, p.end)) for p in places or before] or (
            [(ACCESS_SITES[said(site)], (site.start(), site.end()))] if site else [])
        for name, span in (named if plural else named[:1]) or [(None, None)]:
            spans = [(match.start(), end)] + ([span] if span else [])
            yield spanning(Access(access=ACCESS[form], site=name), "access.site" if name else "access", *spans)
    for match in [*_LINE.finditer(s.lower, s.start, s.end), *_CATHETER.finditer(s.lower, s.start, s.end)]:
        line = re.search(r"line|gauge|g\b", s.lower[match.start():match.end()])
        start = match.start() + line.start() if line else match.start()
        place = next(iter(regions(s, match.end(), s.clause_of(match.start())[1])), None)
        spans = [(start, match.end())] + ([(place.start, place.end)] if place else [])
        yield spanning(Access(access="IV", site=place.name if place else None), "access.line", *spans)


def fluids(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_FLUID):
        if _NOT_FLUID.match(s.lower, match.end(), s.end) or (
                said(match) == "blood" and not _BLOOD_MEASURED.search(s.lower, max(s.start, match.start() - 12),
                                                                      match.start())):
            continue  # "saline lock"; "blood" is given blood only measured out ("two units of blood")
        product, blood = FLUIDS[said(match)]
        scope_start, scope_end = item_scope(s, match.start(), match.end())
        volume = nearest_amount(s, [a for a in amounts(s, scope_start, scope_end) if a.unit in ("mL", "L", "unit")],
                                match.start(), match.end()) or bare_dose(s, match.start(), match.end(), scope_start,
                                                                         scope_end)
        way = route(s, match.end(), scope_end) or route_before(s, scope_start, match.start()) or (
            route(s, s.start, match.start(), last=True) if _THROUGH_IT.match(s.lower, match.end(), scope_end) else None)
        spans = [(match.start(), match.end())]
        spans += [(volume.start, volume.end)] if volume else []
        spans += [(way[1], way[2])] if way else []
        yield spanning(Fluid(product=product, blood=blood, volume=volume.value if volume else None,
                             unit=volume.unit if volume else None, route=way[0] if way else None), "fluid", *spans)


def medications(s: Sentence) -> Iterator[Finding]:
    found: list[Finding] = []
    for match in s.find(_DRUG):
        name, drug_class = MEDICATIONS[said(match)]
        if found and found[-1].what.name == name and said(match) in ROUTES and found[-1].what.route is None:
            found[-1] = replace(found[-1], end=match.end(), what=found[-1].what.model_copy(
                update={"route": ROUTES[said(match)]}))  # "Fentanyl, 800 mics, OTFC": its route, the same dose
            continue
        if found and found[-1].what.name == name and (s.clause_of(found[-1].start) == s.clause_of(match.start()) or
                                                      _NAMED_AGAIN.fullmatch(s.lower, found[-1].end, match.start())):
            continue
        scope_start, scope_end = item_scope(s, match.start(), match.end())
        dose = nearest_amount(s, [a for a in amounts(s, scope_start, scope_end) if a.unit not in ("L", "unit")],
                              match.start(), match.end()) or bare_dose(s, match.start(), match.end(), scope_start,
                                                                       scope_end)
        way = route(s, match.start(), scope_end) or route_before(s, scope_start, match.start())
        spans = [(match.start(), match.end())]
        spans += [(dose.start, dose.end)] if dose else []
        spans += [(way[1], way[2])] if way else []
        found.append(spanning(Medication(name=name, drug_class=drug_class, dose=dose.value if dose else None,
                                         dose_to=dose.upto if dose else None, unit=dose.unit if dose else None,
                                         route=way[0] if way else None), "medication", *spans))
    yield from _shared_route(s, found)


def _shared_route(s: Sentence, found: list[Finding]) -> list[Finding]:
    """'Motrin eight hundred and Tylenol a thousand, both PO': a route said of all the drugs before it."""
    for shared in s.find(_SHARED):
        way = route(s, shared.end(), s.end)
        if way is not None and way[1] == shared.end():
            found = [replace(f, what=f.what.model_copy(update={"route": way[0]}))
                     if f.end <= shared.start() and f.what.route is None else f for f in found]
    return found
