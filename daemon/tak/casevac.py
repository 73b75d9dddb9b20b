"""One CASEVAC request from the casualty cards: the 9-line lines the medic said and a ZMIST per casualty.

Built from the cards (tcccd.card.projection) through tcccd.tak.sendable, so it
holds only entries recorded with no doubt or confirmed. Of the nine lines the
cards give line 3 (patients by precedence, counted from each casualty's
evacuation category) and line 5 (litter, ambulatory); ATAK's CASEVAC tool has
counts for urgent, priority and routine only, so an "urgent surgical" or
"convenience" casualty is named in the remarks, never counted as another
category. Every other line (frequency and call sign, equipment, security,
marking, nationality, terrain) is left out for the medic to fill: never a
default. The uid is the same for every send of one mission's request (all its
casualties, or one), so a re-send moves and updates the marker instead of adding
one.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from tcccd.card.exports import lines as cl
from tcccd.tak.sendable import sendable
from tcccd.wire.card import Card, CardSet

ATAK_PRECEDENCE = ("urgent", "priority", "routine")  # the counts ATAK's _medevac_ carries
UID_NAMESPACE = uuid.UUID("0b1f2d0e-5a3c-4e8e-9a57-7c1c2b9f1a31")
SIGN_LABELS = {"pulse": "Pulse", "bp": "BP", "rr": "RR", "spo2": "SpO2", "avpu": "AVPU", "pain": "Pain"}


@dataclass(frozen=True)
class ZMist:
    """One casualty's ZMIST: each letter's lines joined by newlines ('' when nothing sendable was said)."""

    casualty: int
    z: str
    m: str
    i: str
    s: str
    t: str

    def values(self) -> dict[str, str]:
        return {k: v for k, v in (("z", self.z), ("m", self.m), ("i", self.i), ("s", self.s), ("t", self.t)) if v}


@dataclass(frozen=True)
class Casevac:
    uid: str
    title: str
    mission: int
    casualties: tuple[int, ...]
    counts: dict[str, int] = field(default_factory=dict)  # _medevac_ counts said: urgent/priority/routine/litter/...
    unmapped: dict[str, tuple[int, ...]] = field(default_factory=dict)  # category -> casualties (no ATAK field)
    zmists: tuple[ZMist, ...] = ()
    withheld: int = 0

    def remarks(self) -> str:
        """What the team reads with the marker: where it came from, what is left for the medic, what was held."""
        who = ", ".join(map(str, self.casualties))
        parts = [f"tcccd casualty cards, mission {self.mission}, casualty {who}: only what the medic said."]
        parts += [f"Line 3: casualty {', '.join(map(str, c))} {category}." for category, c in self.unmapped.items()]
        if self.withheld:
            parts.append(f"{self.withheld} entr{'y' if self.withheld == 1 else 'ies'} awaiting the medic's check "
                         f"not sent.")
        return " ".join(parts)


def request_uid(kit_uid: str, mission: int, casualty: int | None) -> str:
    """Stable per request: this kit, this mission, all casualties or one."""
    name = f"{kit_uid}/mission/{mission}/casualty/{casualty if casualty is not None else 'all'}"
    return f"{kit_uid}.casevac.{uuid.uuid5(UID_NAMESPACE, name)}"


def casevac(cards: CardSet, mission: int, kit_uid: str, casualty: int | None = None,
            confirmed_only: bool = False) -> Casevac:
    """The request for every card in `cards` (or the one of `casualty`); ValueError when there is none."""
    chosen = [c for c in cards.cards if casualty is None or c.casualty == casualty]
    if not chosen:
        raise ValueError("no casualty has a card yet" if casualty is None else f"no card for casualty {casualty}")
    kept = [sendable(card, confirmed_only) for card in chosen]
    counts: dict[str, int] = {}
    unmapped: dict[str, list[int]] = {}
    for s in kept:
        category = s.card.a_header.evac_category
        if category is not None:
            name = category.event.what.category
            if name in ATAK_PRECEDENCE:
                counts[name] = counts.get(name, 0) + 1
            else:
                unmapped.setdefault(name, []).append(s.card.casualty)
        mobility = s.card.a_header.mobility
        if mobility is not None:
            counts[mobility.event.what.mobility] = counts.get(mobility.event.what.mobility, 0) + 1
    numbers = tuple(c.casualty for c in chosen)
    who = "+".join(map(str, numbers)) if casualty is None else str(casualty)
    return Casevac(uid=request_uid(kit_uid, mission, casualty), title=f"CASEVAC M{mission} C{who}",
                   mission=mission, casualties=numbers, counts=counts,
                   unmapped={k: tuple(v) for k, v in unmapped.items()},
                   zmists=tuple(zmist(s.card) for s in kept), withheld=sum(len(s.withheld) for s in kept))


def zmist(card: Card) -> ZMist:
    """Z zap (battle roster number, else last four), M mechanisms, I injuries by region, S the latest vitals with
    their times, T treatments with their times: from a card already filtered by tcccd.tak.sendable."""
    a = card.a_header
    zap = a.battle_roster.event.what.number if a.battle_roster else (
        a.last_four.event.what.digits if a.last_four else None)
    mechanisms = ", ".join(e.event.what.mechanism or "" for e in card.b_injury.mechanisms)
    injuries = [f"{x.label}: {x.value}" for x in cl.injuries(card) if x.label != "Mechanism"]
    treatments = [f"{x.label}: {x.value}" for x in cl.tourniquets(card) + cl.treatments(card) + cl.medications(card)]
    return ZMist(casualty=card.casualty, z=zap or "", m=mechanisms, i="\n".join(injuries), s="\n".join(_signs(card)),
                 t="\n".join(treatments))


def _signs(card: Card) -> list[str]:
    out = []
    for column in card.c_vitals:
        when = column.time if column.spoken else f"logged {column.time}"
        for kind, label in SIGN_LABELS.items():
            cell = cl.vitals_cell(column, kind)
            if cell is not None:
                out.append(f"{label} {cell[0]} ({when})")
    return out
