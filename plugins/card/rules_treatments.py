"""Airway, breathing and section F's other treatments: hypothermia prevention, eye shield, splint, pill pack.

Airway: intact, NPA, SGA, CRIC, ET tube. Breathing: O2, needle decompression,
chest tube, chest seal; its side is a side said in its own clause ("needle
decompression right chest"); "oxygen saturation" is a vital sign, not oxygen
given. A blanket alone is hypothermia prevention once said to be on the casualty
("wrapped in a blanket"). Hypothermia prevention said several ways in one sentence ("hypothermia
prevention, wrapped in a blanket") is one treatment; its method is the most
specific named.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tcccd.plugins.card.finding import Finding, distinct, regions, said, side_in, spanning
from tcccd.plugins.card.lexicon import AIRWAY, BREATHING, HYPOTHERMIA, NOT_OXYGEN, PILL_PACK, pattern
from tcccd.plugins.card.sentences import Sentence
from tcccd.wire.card_events import Airway, Breathing, EyeShield, Hypothermia, PillPack, Splint

_AIRWAY = pattern(AIRWAY)
_BREATHING = pattern(BREATHING)
_NOT_OXYGEN = pattern(NOT_OXYGEN)
# a seal named alone is a chest seal where it is put on a casualty ("seal's on, left side"; not "the seal swam")
_ON_THE_CHEST = re.compile(r"\b(?:on|over|left|right|chest|back|vented|side|wound|needle\w*)\b|['’]s\s+on\b")
_SEAL_VERB = re.compile(r"seal\s+(?:it|that|them|the|his|her|off|up|over)\b")  # "you'd seal it": no device named
_HYPOTHERMIA = pattern(HYPOTHERMIA)
_EYE_SHIELD = re.compile(r"\beye\s+shields?\b|\bshield(?:ed)?\s+(?:(?:on|over)\s+)?(?:the\s+|his\s+|her\s+)?"
                         r"(?:(?:left|right)\s+)?eyes?\b|"  # "shield on the left eye"
                         r"\brigid\s+shields?\b")  # "a rigid shield": only an eye is given one
_SPLINT = re.compile(r"\bsplint(?:s|ed|ing)?\b")
_PILL_PACK = pattern(PILL_PACK)
_WRAPPED = re.compile(r"\b(?:wrapped|wrap|covered|applied|placed|put|in\s+place|around|on)\b")


def airway(s: Sentence) -> Iterator[Finding]:
    for value, match in distinct(s, _AIRWAY, AIRWAY):
        yield Finding(Airway(airway=value), match.start(), match.end(), "airway")


def breathing(s: Sentence) -> Iterator[Finding]:
    vitals = [(m.start(), m.end()) for m in s.find(_NOT_OXYGEN)]
    for value, match in distinct(s, _BREATHING, BREATHING):
        clause_start, clause_end = s.clause_of(match.start())
        if any(start <= match.start() < end for start, end in vitals) or _SEAL_VERB.match(s.lower, match.start()) or \
                said(match) in ("seal", "seals") and not _ON_THE_CHEST.search(s.lower, clause_start, clause_end):
            continue
        side = side_in(s, clause_start, clause_end) if value != "O2" else None
        spans = [(match.start(), match.end())] + ([(side[1], side[2])] if side else [])
        yield spanning(Breathing(breathing=value, side=side[0] if side else None),
                       "breathing.side" if side else "breathing", *spans)


def hypothermia(s: Sentence) -> Iterator[Finding]:
    mentions = list(s.find(_HYPOTHERMIA))
    if not mentions:
        return
    named = any(said(m).startswith(("hypothermia", "hpmk")) for m in mentions)
    if not named and not any(_WRAPPED.search(s.lower, *s.clause_of(m.start())) for m in mentions):
        return  # "the blanket is wet": a blanket is hypothermia prevention once it is on the casualty
    methods = [HYPOTHERMIA[said(m)] for m in mentions]
    method = next((m for m in methods if m), None)
    yield spanning(Hypothermia(method=method), "hypothermia", *((m.start(), m.end()) for m in mentions))


def eye_shields(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_EYE_SHIELD):
        clause_start, clause_end = s.clause_of(match.start())
        side = side_in(s, clause_start, clause_end)
        spans = [(match.start(), match.end())] + ([(side[1], side[2])] if side else [])
        yield spanning(EyeShield(side=side[0] if side else None), "eye_shield", *spans)


def splints(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_SPLINT):
        clause_start, clause_end = s.clause_of(match.start())
        place = next(iter(regions(s, clause_start, clause_end)), None)
        side = side_in(s, place.end, clause_end) if place and place.side is None else None
        site = f"{side[0]} {place.part}" if place and side and side[0] in ("left", "right") else (
            place.name if place else None)  # "wrist splint on the left"
        spans = [(match.start(), match.end())] + ([(place.start, place.end)] if place else [])
        yield spanning(Splint(site=site), "splint", *spans)
        return


def pill_pack(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_PILL_PACK):
        yield Finding(PillPack(), match.start(), match.end(), "pill_pack")
        return
