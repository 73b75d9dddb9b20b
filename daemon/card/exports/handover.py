"""The 9-line MEDEVAC request and the MIST handover, from the cards: only what the medic said, the rest left blank.

Of the nine lines, a medic's narration gives only line 3 (patients by
precedence: each casualty's evacuation category, when said) and line 5 (litter
or ambulatory, when said). Every other line (pickup site, frequency and call
sign, special equipment, security, marking, nationality, CBRN/terrain) is left
blank and marked for the medic: never a default, never a precedence inferred
from vitals. MIST per casualty: Mechanism, Injuries, Signs (the latest reading
of each vital, with its time), Treatments; a line with nothing said is blank
and marked too. Unconfirmed entries are marked "[unconfirmed]".
"""

from __future__ import annotations

from tcccd.card.exports import lines as cl
from tcccd.wire.card import Card, CardSet, Entry

BLANK = "__________ [not said: medic to fill]"
PRECEDENCE = (("A", "urgent"), ("B", "urgent surgical"), ("C", "priority"), ("D", "routine"), ("E", "convenience"))
NINE_LINE_TITLES = ("Location of pickup site", "Radio frequency, call sign and suffix",
                    "Number of patients by precedence", "Special equipment required", "Number of patients by type",
                    "Security at pickup site", "Method of marking pickup site", "Patient nationality and status",
                    "CBRN contamination / terrain")


def _mark(entry: Entry) -> str:
    return " [unconfirmed]" if entry.status == "unconfirmed" else ""


def _precedence(cards: CardSet) -> str:
    said = {c.casualty: c.a_header.evac_category for c in cards.cards if c.a_header.evac_category is not None}
    parts = []
    for letter, category in PRECEDENCE:
        entries = [e for e in said.values() if e.event.what.category == category]
        if entries:
            parts.append(f"{letter} - {len(entries)} {category}" + ("" if all(e.status != "unconfirmed"
                                                                          for e in entries) else " [unconfirmed]"))
    missing = [c.casualty for c in cards.cards if c.casualty not in said]
    if missing:
        parts.append("category not said for casualty " + ", ".join(map(str, missing)) + " [medic to fill]")
    return "; ".join(parts) if said else BLANK


def _by_type(cards: CardSet) -> str:
    said = {c.casualty: c.a_header.mobility for c in cards.cards if c.a_header.mobility is not None}
    parts = [f"{kind[0].upper()} - {count}" for kind in ("litter", "ambulatory")
             if (count := sum(1 for e in said.values() if e.event.what.mobility == kind))]
    if any(e.status == "unconfirmed" for e in said.values()):
        parts.append("[unconfirmed]")
    missing = [c.casualty for c in cards.cards if c.casualty not in said]
    if missing:
        parts.append("type not said for casualty " + ", ".join(map(str, missing)) + " [medic to fill]")
    return "; ".join(parts) if said else BLANK


def nine_line(cards: CardSet) -> str:
    lines = {3: _precedence(cards), 5: _by_type(cards)}
    out = ["9-LINE MEDEVAC REQUEST (from the casualty cards: only lines 3 and 5 come from what was said)"]
    out += [f"Line {n}. {title}: {lines.get(n, BLANK)}" for n, title in enumerate(NINE_LINE_TITLES, start=1)]
    return "\n".join(out) + "\n"


def _signs(card: Card) -> str:
    latest: dict[str, tuple[str, str, Entry]] = {}
    for column in card.c_vitals:
        time = column.time if column.spoken else f"logged {column.time}"
        for kind, label in cl.VITAL_ROWS:
            cell = cl.vitals_cell(column, kind)
            if cell is not None:
                latest[kind] = (label, f"{cell[0]} ({time})", cell[1])
    return "; ".join(f"{label} {value}{_mark(entry)}" for label, value, entry in latest.values())


def mist(card: Card) -> str:
    mechanism = ", ".join(e.event.what.mechanism + _mark(e) for e in card.b_injury.mechanisms)
    injuries = [line for line in cl.injuries(card) if line.label != "Mechanism"]
    treatments = cl.tourniquets(card) + cl.treatments(card) + cl.medications(card)
    rows = (("M", "Mechanism", mechanism),
            ("I", "Injuries", "; ".join(f"{x.label}: {x.value}" + (" [unconfirmed]" if x.unconfirmed else "")
                                        for x in injuries)),
            ("S", "Signs", _signs(card)),
            ("T", "Treatments", "; ".join(f"{x.label}: {x.value}" + (" [unconfirmed]" if x.unconfirmed else "")
                                          for x in treatments)))
    out = [f"MIST - casualty {card.casualty}"]
    out += [f"{letter} - {title}: {value or BLANK}" for letter, title, value in rows]
    return "\n".join(out) + "\n"


def handover(cards: CardSet) -> str:
    """The 9-line request and a MIST report per casualty, as one text."""
    return "\n".join([nine_line(cards), *(mist(card) for card in cards.cards)])
