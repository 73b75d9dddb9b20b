"""Section F medications: name (and its DD 1380 class: analgesic, antibiotic, other), dose, unit, route.

The dose is the amount said right before the name ("1 g TXA") or after it ("ketamine
50 mg"), within the name's own stretch of the sentence, so that two drugs in one
sentence never swap doses or routes. A drug named twice in a row ("fentanyl 800 mcg
OTFC") is one administration.
"""

from __future__ import annotations

from collections.abc import Iterator

from tcccd.plugins.card.doses import amounts, item_scope, nearest_amount, route
from tcccd.plugins.card.finding import Finding, said, spanning
from tcccd.plugins.card.lexicon import MEDICATIONS, pattern
from tcccd.plugins.card.sentences import Sentence
from tcccd.wire.card_events import Medication

_DRUG = pattern(MEDICATIONS)


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
