"""A printable one-page card per casualty, laid out like DD Form 1380's sections, rendered with reportlab.

Sections A to H in the form's order: identity and evacuation, mechanism and
injuries with a tourniquet box per limb, signs and symptoms in time columns,
treatments by MARCH with the form's check boxes, medications, other treatments,
notes, first responder. A box nobody spoke about stays empty (name, gender,
date, unit: never filled). An unconfirmed entry prints with a "?" (its check
box too), to be checked with the medic. What does not fit its box is counted on
the page ("+2 more: see the JSON card"), never dropped silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcccd.card.exports import lines as cl
from tcccd.wire.card import Card, CardSet, Entry

PAGE_W, PAGE_H, MARGIN = 612.0, 792.0, 24.0
WIDTH = PAGE_W - 2 * MARGIN
MECHANISMS = ("artillery", "blunt", "burn", "fall", "grenade", "GSW", "IED", "landmine", "MVC", "RPG")
LIMBS = ("right arm", "left arm", "right leg", "left leg")
VITAL_COLUMNS = 6
BREATHING = (("O2", "O2"), ("needle decompression", "Needle-D"), ("chest tube", "Chest-Tube"),
             ("chest seal", "Chest-Seal"))


class _Page:
    """A reportlab canvas with the few drawing moves the card needs, top-down coordinates."""

    def __init__(self, canvas: Any) -> None:
        self.c = canvas

    def text(self, x: float, y: float, value: str, size: float = 8, bold: bool = False) -> None:
        self.c.setFont("Helvetica-Bold" if bold else "Helvetica", size)
        self.c.drawString(MARGIN + x, PAGE_H - y, value)

    def box(self, y: float, height: float, title: str) -> None:
        self.c.rect(MARGIN, PAGE_H - y - height, WIDTH, height)
        self.text(4, y + 10, title, 8.5, bold=True)

    def check(self, x: float, y: float, label: str, entries: list[Entry]) -> None:
        """A check box: X when said, ? when only unconfirmed entries say it, empty when nobody did."""
        self.c.rect(MARGIN + x, PAGE_H - y - 6.5, 7, 7)
        if entries:
            mark = "X" if any(e.status != "unconfirmed" for e in entries) else "?"
            self.text(x + 1.2, y + 5, mark, 7, bold=True)
        self.text(x + 10, y + 5.5, label)

    def lines(self, x: float, y: float, rows: list[str], max_rows: int, step: float = 10) -> None:
        for i, row in enumerate(rows[:max_rows]):
            self.text(x, y + i * step, row[:110])
        if len(rows) > max_rows:
            self.text(x, y + max_rows * step, f"+{len(rows) - max_rows} more: see the JSON card", 7, bold=True)


def _shown(line: cl.Line) -> str:
    return ("? " if line.unconfirmed else "") + f"{line.label}: {line.value}"


def _value(entry: Entry | None, text: str) -> str:
    if entry is None:
        return ""
    return ("? " if entry.status == "unconfirmed" else "") + text


def _section_a(page: _Page, card: Card, y: float) -> float:
    page.box(y, 58, "A  Battle roster #, evacuation, identity")
    a = card.a_header
    roster = _value(a.battle_roster, a.battle_roster.event.what.number) if a.battle_roster else ""
    page.text(6, y + 24, f"BATTLE ROSTER #: {roster}")
    page.text(200, y + 24, f"LAST 4: {_value(a.last_four, a.last_four.event.what.digits) if a.last_four else ''}")
    said = a.evac_category.event.what.category if a.evac_category else ""
    page.text(300, y + 24, "EVAC:")
    for i, category in enumerate(("urgent", "priority", "routine")):
        page.check(328 + 58 * i, y + 19, category.capitalize(), [a.evac_category] if said.startswith(category) else [])
    mobility = _value(a.mobility, a.mobility.event.what.mobility) if a.mobility else ""
    allergies = _value(a.allergies, a.allergies.event.what.allergies) if a.allergies else ""
    page.text(6, y + 38, f"ALLERGIES: {allergies}")
    page.text(200, y + 38, f"LITTER / AMBULATORY: {mobility}")
    page.text(380, y + 38, f"EVAC CATEGORY SAID: {_value(a.evac_category, said.upper()) if said else ''}")
    page.text(6, y + 51, "NAME: ____________________  GENDER: ___  DATE: ________  TIME: _____  SERVICE: _____  "
                         "UNIT: ________")
    return y + 58


def _section_b(page: _Page, card: Card, y: float) -> float:
    page.box(y, 150, "B  Mechanism of injury, injuries, tourniquets")
    b = card.b_injury
    for i, name in enumerate(MECHANISMS):
        page.check(6 + 56 * i, y + 18, name, [e for e in b.mechanisms if e.event.what.mechanism == name])
    others = [e for e in b.mechanisms if e.event.what.mechanism not in MECHANISMS]
    page.text(6, y + 36, "Other: " + ", ".join(_value(e, e.event.what.mechanism) for e in others))
    injuries = [_shown(line) for line in cl.injuries(card) if line.label != "Mechanism"]
    page.text(6, y + 50, "INJURIES (body region: kind)", bold=True)
    page.lines(6, y + 62, injuries, 8)
    page.text(300, y + 50, "TOURNIQUETS (type, time)", bold=True)
    for i, limb in enumerate((*LIMBS, None)):
        entries = [e for e in b.tourniquets if e.event.what.limb == limb]
        label = f"TQ {limb.upper()}:" if limb else "TQ junctional / limb not said:"
        shown = "; ".join(_value(e, cl.join(e.event.what.device, e.event.what.category if not limb else None,
                                             cl.when(e))) for e in entries)
        page.text(300, y + 62 + 12 * i, f"{label} {shown}"[:70])
    return y + 150


def _section_c(page: _Page, card: Card, y: float) -> float:
    page.box(y, 96, "C  Signs and symptoms (time said; 'log HHMM' = clock time of the words, no time said)")
    columns = card.c_vitals[-VITAL_COLUMNS:]
    rows = (("TIME", None), *[(label, kind) for kind, label in cl.VITAL_ROWS])
    for r, (label, kind) in enumerate(rows):
        page.text(6, y + 24 + 11 * r, label, bold=(kind is None))
        for i, column in enumerate(columns):
            if kind is None:
                shown = column.time if column.spoken else f"log {column.time}"
            else:
                cell = cl.vitals_cell(column, kind)
                shown = "" if cell is None else _value(cell[1], cell[0])
            page.text(112 + 72 * i, y + 24 + 11 * r, shown[:16])
    if len(card.c_vitals) > VITAL_COLUMNS:
        page.text(360, y + 10, f"+{len(card.c_vitals) - VITAL_COLUMNS} earlier columns: see the JSON card", 7)
    return y + 96


def _section_e(page: _Page, card: Card, y: float) -> float:
    page.box(y, 128, "E  Treatments (MARCH)")
    e, b = card.e_treatments, card.b_injury
    page.text(6, y + 24, "C:", bold=True)
    for i, category in enumerate(("extremity", "junctional", "truncal")):
        page.check(24 + 70 * i, y + 19, f"TQ-{category.capitalize()}",
                   [t for t in b.tourniquets if t.event.what.category == category])
    for i, kind in enumerate(("hemostatic", "pressure")):
        page.check(230 + 100 * i, y + 19, f"Dressing-{kind.capitalize()}",
                   [d for d in e.hemorrhage if d.event.what.dressing == kind])
    page.text(6, y + 38, "A:", bold=True)
    for i, device in enumerate(("intact", "NPA", "CRIC", "ET tube", "SGA")):
        page.check(24 + 56 * i, y + 33, device, [a for a in e.airway if a.event.what.airway == device])
    page.text(6, y + 52, "B:", bold=True)
    for i, (device, label) in enumerate(BREATHING):
        page.check(24 + 70 * i, y + 47, label, [x for x in e.breathing if x.event.what.breathing == device])
    details = [_shown(line) for line in cl.treatments(card)]
    page.lines(6, y + 66, details, 6)
    return y + 128


def _section_f(page: _Page, card: Card, y: float) -> float:
    page.box(y, 120, "F  Medications (analgesic, antibiotic, other: name, dose, route, time) and other treatments")
    page.lines(6, y + 24, [_shown(line) for line in cl.medications(card)], 9)
    return y + 120


def _section_g_h(page: _Page, card: Card, y: float) -> float:
    height = PAGE_H - MARGIN - y - 14
    page.box(y, height, "G  Notes (negated findings in the medic's words)        H  First responder")
    page.lines(6, y + 24, [_shown(line) for line in cl.notes(card)], int((height - 30) // 10))
    page.lines(360, y + 24, [_shown(line) for line in cl.responder(card)] or ["NAME: ________  LAST 4: ____"], 3)
    return y + height


def render(cards: CardSet, path: Path) -> Path:
    """One page per casualty card, written to `path`."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(path), pagesize=letter, pageCompression=1)
    canvas.setTitle("TCCC casualty cards (DD Form 1380 layout)")
    if not cards.cards:
        _Page(canvas).text(0, MARGIN + 4, "No casualty card: nothing for a card was said.", 12, True)
        canvas.showPage()
    for card in cards.cards:
        page = _Page(canvas)
        page.text(0, MARGIN + 4, f"TACTICAL COMBAT CASUALTY CARE (TCCC) CARD - CASUALTY {card.casualty}", 12, True)
        page.text(0, MARGIN + 16, "DD Form 1380 layout, filled by tcccd from the medic's words only.  "
                                  "? = unconfirmed: check with the medic.  Blank = not said.", 7.5)
        y = MARGIN + 22
        for section in (_section_a, _section_b, _section_c, _section_e, _section_f, _section_g_h):
            y = section(page, card, y) + 4
        canvas.showPage()
    canvas.save()
    return path
