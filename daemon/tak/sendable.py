"""What of a casualty card may leave the kit for the TAK network, and what waits for the medic's check.

An entry is sent when it was recorded with no doubt (`recorded`: said, nothing
flagged) or confirmed by the medic (`confirmed`); an `unconfirmed` entry (a word
the ASR was unsure of, a value no body gives) is never sent: it is left out and
counted, so the remarks can say how many wait for the medic's check. With
`tak.confirmed_only` only reviewed entries go. Only what a CASEVAC can carry is
kept: the 9-line's precedence (line 3) and litter/ambulatory (line 5), and per
casualty the ZMIST: zap number (battle roster number, else last four), mechanism,
injuries, the latest reading of each vital sign, treatments. Allergies, notes,
negated findings and the responder stay on the card. A vital sign whose latest
reading is doubted is withheld whole: an older reading never stands in for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcccd.wire.card import Card, Entry, Header, VitalsColumn
from tcccd.wire.card_events import VITAL_KINDS

TREATMENT_LISTS = (("e_treatments", ("hemorrhage", "airway", "breathing", "access", "fluids")),
                   ("f_medications", ("medications", "hypothermia", "eye_shields", "splints", "pill_pack")))


@dataclass(frozen=True)
class Sendable:
    """A card with only what may be sent (everything else taken off) and the ids of the entries withheld."""

    card: Card
    withheld: tuple[str, ...]


class _Filter:
    def __init__(self, confirmed_only: bool) -> None:
        self.allowed = {"confirmed"} if confirmed_only else {"recorded", "confirmed"}
        self.withheld: list[str] = []

    def one(self, entry: Entry | None) -> Entry | None:
        if entry is None:
            return None
        if entry.status in self.allowed:
            return entry
        self.withheld.append(entry.event.id)
        return None

    def many(self, entries: list[Entry]) -> list[Entry]:
        return [kept for entry in entries if (kept := self.one(entry)) is not None]


def sendable(card: Card, confirmed_only: bool = False) -> Sendable:
    """The card as the CASEVAC may carry it."""
    keep = _Filter(confirmed_only)
    a = card.a_header
    header = Header(battle_roster=keep.one(a.battle_roster), last_four=keep.one(a.last_four),
                    evac_category=keep.one(a.evac_category), mobility=keep.one(a.mobility))
    b = card.b_injury
    injury = b.model_copy(update={"mechanisms": keep.many(b.mechanisms), "injuries": keep.many(b.injuries),
                                  "burn_extent": keep.one(b.burn_extent), "tourniquets": keep.many(b.tourniquets)})
    update = {"a_header": header, "b_injury": injury, "c_vitals": _latest_vitals(card.c_vitals, keep)}
    for section, names in TREATMENT_LISTS:
        part = getattr(card, section)
        update[section] = part.model_copy(update={name: keep.many(getattr(part, name)) for name in names})
    kept = Card(casualty=card.casualty, **update)
    return Sendable(kept, tuple(keep.withheld))


def _latest_vitals(columns: list[VitalsColumn], keep: _Filter) -> list[VitalsColumn]:
    """The latest reading of each vital sign in its own column (oldest first), or none when it is doubted."""
    latest: dict[str, VitalsColumn] = {}
    for column in columns:  # oldest first: a later column's reading replaces an earlier one
        for kind in VITAL_KINDS:
            if getattr(column, kind) is not None:
                latest[kind] = column
    out: list[VitalsColumn] = []
    for column in columns:
        cells = {kind: keep.one(getattr(column, kind)) for kind in VITAL_KINDS if latest.get(kind) is column}
        cells = {kind: entry for kind, entry in cells.items() if entry is not None}
        if cells:
            out.append(VitalsColumn(time=column.time, spoken=column.spoken, **cells))
    return out
