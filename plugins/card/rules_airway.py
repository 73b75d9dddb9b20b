"""Airway (intact, NPA, SGA, CRIC, ET tube) and breathing (O2, needle decompression, chest tube, chest seal).

A breathing intervention's side is a side said in its own clause ("needle
decompression right chest"); "oxygen saturation" is a vital sign, not oxygen given.
"""

from __future__ import annotations

from collections.abc import Iterator

from tcccd.plugins.card.finding import Finding, distinct, side_in, spanning
from tcccd.plugins.card.lexicon import AIRWAY, BREATHING, NOT_OXYGEN, pattern
from tcccd.plugins.card.sentences import Sentence
from tcccd.wire.card_events import Airway, Breathing

_AIRWAY = pattern(AIRWAY)
_BREATHING = pattern(BREATHING)
_NOT_OXYGEN = pattern(NOT_OXYGEN)



def airway(s: Sentence) -> Iterator[Finding]:
    for value, match in distinct(s, _AIRWAY, AIRWAY):
        yield Finding(Airway(airway=value), match.start(), match.end(), "airway")


def breathing(s: Sentence) -> Iterator[Finding]:
    vitals = [(m.start(), m.end()) for m in s.find(_NOT_OXYGEN)]
    for value, match in distinct(s, _BREATHING, BREATHING):
        if any(start <= match.start() < end for start, end in vitals):
            continue
        clause_start, clause_end = s.clause_of(match.start())
        side = side_in(s, clause_start, clause_end) if value != "O2" else None
        spans = [(match.start(), match.end())] + ([(side[1], side[2])] if side else [])
        yield spanning(Breathing(breathing=value, side=side[0] if side else None),
                       "breathing.side" if side else "breathing", *spans)
