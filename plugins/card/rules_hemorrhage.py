"""Hemorrhage control: tourniquets (per limb, type, category) and hemostatic or pressure dressings.

A tourniquet's limb is the limb of a body region said in the same clause ("on
the left leg", "left thigh" -> left leg; "both legs" -> two tourniquets). A
tourniquet said again in the same sentence without a limb ("..., CAT
tourniquet") is the same tourniquet and gives it its type. A limb tourniquet is
an extremity tourniquet by definition; junctional and truncal only when said.
A tourniquet whose limb was not said is kept with the limb blank. A device
named alone ("a second CAT was placed on the left thigh") is a tourniquet.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from tcccd.plugins.card.finding import NEXT_CASUALTY, Finding, regions, said, spanning
from tcccd.plugins.card.lexicon import (
    HEMOSTATIC,
    PRESSURE,
    TOURNIQUET_CATEGORIES,
    TOURNIQUET_DEVICES,
    TOURNIQUET_WORDS,
    pattern,
)
from tcccd.plugins.card.sentences import Sentence
from tcccd.wire.card_events import Dressing, Tourniquet

_TOURNIQUET = pattern(TOURNIQUET_WORDS)
_DEVICE = pattern(TOURNIQUET_DEVICES)
_CATEGORY = pattern(TOURNIQUET_CATEGORIES)
_HEMOSTATIC = pattern(HEMOSTATIC)
_PRESSURE = pattern(PRESSURE)
_COUNTS = {"two": 2, "2": 2, "both": 2, "three": 3, "3": 3}
_COUNT = re.compile(r"\b(two|2|both|three|3)\s+(?:\w+\s+)?$")
_ACCESS_SAID = re.compile(r"\b(?:io|iv|ivs|ios|cannula)\b")  # "two CATs, left leg, IO right humerus": the IO's site
_TIME_OF = re.compile(r"\s+time\b")  # "TQ time 0912": the time of the tourniquet just said
_BESIDE = re.compile(r"\b(?:above|below|proximal\s+to|distal\s+to|next\s+to|beside)\s+(?:it|that\s+one|"
                     r"the\s+first(?:\s+one)?|the\s+other(?:\s+one)?)\b|"
                     r"\b(?:higher|further)(?:\s+up)?\b")  # "a second CAT went on higher up"



def tourniquets(s: Sentence) -> Iterator[Finding]:
    found: list[Finding] = []
    mentions = list(s.find(_TOURNIQUET))
    worded = {s.clause_of(m.start()) for m in mentions}
    mentions += [m for m in s.find(_DEVICE) if s.clause_of(m.start()) not in worded]  # "a second CAT was placed"
    mentions.sort(key=lambda m: m.start())
    mentions = [m for i, m in enumerate(mentions)  # "tq tq right arm": one tourniquet, the word said twice
                if i + 1 == len(mentions) or s.lower[m.end():mentions[i + 1].start()].strip()]
    for i, mention in enumerate(mentions):
        clause_start, clause_end = s.clause_of(mention.start())
        if i + 1 < len(mentions) and mentions[i + 1].start() < clause_end:  # "TQ left leg at 0905 TQ right arm"
            clause_end = mentions[i + 1].start()
        other = NEXT_CASUALTY.search(s.lower, mention.end(), clause_end)
        clause_end = other.start() if other else clause_end
        device = next(s.find(_DEVICE, clause_start, clause_end), None)
        category = next(s.find(_CATEGORY, clause_start, clause_end), None)
        spans = [(mention.start(), mention.end())] + [(m.start(), m.end()) for m in (device, category) if m]
        dressed = [m.start() for rx in (_HEMOSTATIC, _PRESSURE, _ACCESS_SAID)
                   for m in s.find(rx, mention.end(), clause_end)]
        limbs = [r for r in regions(s, clause_start, min(dressed, default=clause_end)) if r.limb]  # not the dressing's
        if any(r.start > mention.start() for r in limbs):  # "gsw right thigh tq right leg": the thigh is the wound's
            limbs = [r for r in limbs if r.start > mention.start()]
        if found and (not limbs and found[-1].what.limb is not None or _TIME_OF.match(s.lower, mention.end())):
            found[-1] = _merged(found[-1], device, category, spans)
            continue
        count = _COUNT.search(s.lower, max(clause_start, mention.start() - 12), mention.start())
        if count and said(mention).endswith("s") and len(limbs) == 1:  # "two tourniquets on the left leg"
            limbs = limbs * _COUNTS[count.group(1)]
        for region in limbs or [None]:
            what = Tourniquet(limb=region.limb if region else None,
                              category=TOURNIQUET_CATEGORIES[said(category)] if category else (
                                  "extremity" if region else None),
                              device=TOURNIQUET_DEVICES[said(device)] if device else None)
            extra = [(region.start, region.end)] if region else []
            finding = spanning(what, "tourniquet.limb" if region else "tourniquet", *spans, *extra)
            if region is not None and region is not limbs[0] and region.start > mention.start():
                finding = replace(finding, head=(region.start, region.end))  # "... and right leg at 0910": its time
            found.append(finding)
    yield from found


def beside_the_last(s: Sentence, finding: Finding, last: Any) -> Any:
    """'Still bleeding, second CAT just above it': a tourniquet said with no limb, placed by the tourniquet said
    before it (`last`, the last entry, maybe of an earlier utterance), is on that one's limb."""
    what = finding.what
    if what.kind != "tourniquet" or what.limb is not None or getattr(last, "kind", None) != "tourniquet" or \
            last.limb is None or not _BESIDE.search(s.lower, *s.clause_of(finding.named[0])):
        return what
    return what.model_copy(update={"limb": last.limb, "category": what.category or "extremity"})


def tourniquet_again(what: Any, last: Any) -> Any | None:
    """'Tourniquet applied to the left leg at 0912. CAT tourniquet.': a tourniquet said with no limb and no category
    right after another (`last`, the event said just before it, in the same transcript) is that tourniquet again:
    its `what` with the type said, or None where it is another. Two tourniquets said one after the other are told
    apart by their limbs, which is what a medic says of a second one (within one sentence: `tourniquets`)."""
    if what.kind != "tourniquet" or what.limb is not None or what.category not in (None, "extremity") or \
            last is None or last.kind != "tourniquet" or last.negated:
        return None
    if what.device is not None and last.what.device not in (None, what.device):
        return None
    return last.what.model_copy(update={"device": last.what.device or what.device})


def _merged(earlier: Finding, device: re.Match | None, category: re.Match | None,
            spans: list[tuple[int, int]]) -> Finding:
    what = earlier.what
    if device and what.device is None:
        what = what.model_copy(update={"device": TOURNIQUET_DEVICES[said(device)]})
    if category and what.limb is None:
        what = what.model_copy(update={"category": TOURNIQUET_CATEGORIES[said(category)]})
    return spanning(what, earlier.rule, (earlier.start, earlier.end), *spans)


def dressings(s: Sentence) -> Iterator[Finding]:
    """'Combat gauze packed into the right groin', 'pressure dressing to the right arm'; the site is a region said in
    the same clause; one said after it over one said with a tourniquet before it ("right arm TQ off, converted to a
    pressure dressing on the forearm"; "left arm TQ converted to a pressure dressing" is the left arm), the product
    only when named."""
    for kind, table, rx in (("hemostatic", HEMOSTATIC, _HEMOSTATIC), ("pressure", PRESSURE, _PRESSURE)):
        mentions = list(s.find(rx))
        if not mentions:
            continue
        clause_start, clause_end = s.clause_of(mentions[0].start())
        mentions = [m for m in mentions if clause_start <= m.start() < clause_end]
        product = next((table[said(m)] for m in mentions if table[said(m)]), None)
        tourniquets = [m.end() for m in s.find(_TOURNIQUET, clause_start, mentions[0].start())]
        places = regions(s, clause_start, clause_end)
        own = [p for p in places if not any(p.end <= t for t in tourniquets)]
        places = own if any(p.start >= mentions[0].end() for p in own) else places
        sites = [p for p in places if (p.start, p.end) == (places[0].start, places[0].end)]  # "both legs": two
        for site in sites or [None]:
            spans = [(m.start(), m.end()) for m in mentions] + ([(site.start, site.end)] if site else [])
            yield spanning(Dressing(dressing=kind, product=product, site=site.name if site else None),
                           "dressing.site" if site else "dressing", *spans)
