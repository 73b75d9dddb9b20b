"""Circulation: IV/IO access and fluids or blood products (name, volume, route).

"IV" is access only when said as access ("IV access", "18 gauge IV in the right
arm", "IO in the sternum"); after a drug or a fluid it is that item's route
("1 g TXA IV"). A fluid is a named product; its volume is an amount said right
before or after it, its route a route said in its own stretch of the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tcccd.plugins.card.doses import amounts, item_scope, nearest_amount, route
from tcccd.plugins.card.finding import Finding, regions, said, spanning
from tcccd.plugins.card.lexicon import ACCESS, ACCESS_CUES_AFTER, ACCESS_DEVICES, ACCESS_SITES, FLUIDS, pattern
from tcccd.plugins.card.sentences import Sentence
from tcccd.wire.card_events import Access, Fluid

_ACCESS = pattern(ACCESS)
_CUE_AFTER = re.compile(r"\s+(?:" + "|".join(re.escape(c) for c in ACCESS_CUES_AFTER) + r")\b")
_CUE_BEFORE = re.compile(r"(?:gauge|placed|started|established|inserted|got|an|two|2)\s+$")
_SITE = pattern(ACCESS_SITES)
_FLUID = pattern(FLUIDS)
_NOT_FLUID = re.compile(r"\s+lock\b")



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
