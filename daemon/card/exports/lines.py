"""The card in words, section by section: what the printable card and the text card show, and how.

Every line is one entry of the card, written as a medic writes the form ("TQ left
leg: CAT, 0912", "TXA 1 g IV 0915"), with its event id and whether it is
unconfirmed. A time is the one the medic said; an entry with none shows the
clock time it was logged, marked as such ("logged 0917"), never as the time of
the act. A field nobody spoke has no line: the renderers leave its box blank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tcccd.wire.card import Card, Entry, VitalsColumn

AVPU_WORDS = {"A": "Alert", "V": "Voice", "P": "Pain", "U": "Unresponsive"}
VITAL_ROWS = (("pulse", "Pulse (rate, location)"), ("bp", "Blood pressure"), ("rr", "Respiratory rate"),
              ("spo2", "Pulse ox % O2 sat"), ("avpu", "AVPU"), ("pain", "Pain (0-10)"))


@dataclass(frozen=True)
class Line:
    label: str
    value: str
    event: str
    unconfirmed: bool


def num(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def when(entry: Entry) -> str:
    time = entry.event.time
    return time.at_hhmm if time.at_hhmm else f"logged {time.logged_hhmm}"


def _line(label: str, value: str, entry: Entry) -> Line:
    return Line(label, " ".join(value.split()), entry.event.id, entry.status == "unconfirmed")


def join(*parts: Any) -> str:
    return ", ".join(str(p) for p in parts if p not in (None, ""))


def header(card: Card) -> list[Line]:
    a = card.a_header
    rows = [("Battle roster #", a.battle_roster, "number"), ("Last 4", a.last_four, "digits"),
            ("Evac category", a.evac_category, "category"), ("Litter / ambulatory", a.mobility, "mobility"),
            ("Allergies", a.allergies, "allergies")]
    return [_line(label, str(getattr(e.event.what, field)), e) for label, e, field in rows if e is not None]


def injuries(card: Card) -> list[Line]:
    b = card.b_injury
    lines = [_line("Mechanism", e.event.what.mechanism, e) for e in b.mechanisms]
    lines += [_line(e.event.what.region or "region not said", e.event.what.injury, e) for e in b.injuries]
    if b.burn_extent is not None:
        lines.append(_line("Burns", f"{num(b.burn_extent.event.what.percent)}% TBSA", b.burn_extent))
    return lines


def tourniquets(card: Card) -> list[Line]:
    lines = []
    for e in card.b_injury.tourniquets:
        what = e.event.what
        place = what.limb or (f"{what.category}" if what.category else "limb not said")
        lines.append(_line(f"TQ {place}", join(what.device, when(e)), e))
    return lines


def vitals_cell(column: VitalsColumn, kind: str) -> tuple[str, Entry] | None:
    """One reading of a vitals column as the form writes it, with its entry; None when it was not said."""
    entry = getattr(column, kind)
    if entry is None:
        return None
    what = entry.event.what
    if kind == "pulse":
        text = join(num(what.rate), what.location)
    elif kind == "bp":
        text = f"{num(what.systolic)}/{num(what.diastolic) or '?'}"
    elif kind == "spo2":
        text = f"{num(what.percent)}%"
    elif kind == "avpu":
        text = AVPU_WORDS.get(what.level or "", "")
    else:
        text = num(what.rate if kind == "rr" else what.score)
    return text, entry


def treatments(card: Card) -> list[Line]:
    e_ = card.e_treatments
    lines = [_line(f"{e.event.what.dressing or ''} dressing".strip(),
                   join(e.event.what.product, e.event.what.site, when(e)), e) for e in e_.hemorrhage]
    lines += [_line("Airway", e.event.what.airway, e) for e in e_.airway]
    lines += [_line("Breathing", join(e.event.what.breathing, e.event.what.side, when(e)), e) for e in e_.breathing]
    lines += [_line(f"{e.event.what.access} access", join(e.event.what.site, when(e)), e) for e in e_.access]
    for e in e_.fluids:
        what = e.event.what
        amount = f"{num(what.volume)} {what.unit}" if what.volume is not None else ""
        lines.append(_line("Blood product" if what.blood else "Fluid",
                           " ".join(p for p in (what.product, amount, what.route or "", when(e)) if p), e))
    return lines


def medications(card: Card) -> list[Line]:
    f = card.f_medications
    lines = []
    for e in f.medications:
        what = e.event.what
        dose = f"{num(what.dose)} {what.unit or ''}".strip() if what.dose is not None else ""
        lines.append(_line(what.drug_class or "medication", " ".join(
            p for p in (what.name, dose, what.route or "", when(e)) if p), e))
    lines += [_line("Hypothermia prevention", e.event.what.method or "yes", e) for e in f.hypothermia]
    lines += [_line("Eye shield", e.event.what.side or "side not said", e) for e in f.eye_shields]
    lines += [_line("Splint", e.event.what.site or "site not said", e) for e in f.splints]
    lines += [_line("Combat pill pack", "given", e) for e in f.pill_pack]
    return lines


def notes(card: Card) -> list[Line]:
    return [_line("Note", e.event.what.text if e.event.kind == "note" else e.event.words.text, e)
            for e in card.g_notes]


def responder(card: Card) -> list[Line]:
    h = card.h_responder
    lines = [_line("Name", h.name.event.what.name, h.name)] if h.name else []
    return lines + ([_line("Last 4", h.last_four.event.what.last_four, h.last_four)] if h.last_four else [])


def text_card(card: Card) -> str:
    """The card as plain text (`tcccd card --text`): sections in the form's order, blank sections said blank."""
    out = [f"TCCC CARD (DD 1380) - casualty {card.casualty}"]
    sections = (("A", "Identity and evacuation", header(card)), ("B", "Mechanism, injuries, tourniquets",
                injuries(card) + tourniquets(card)), ("E", "Treatments (MARCH)", treatments(card)),
                ("F", "Medications and other", medications(card)), ("G", "Notes", notes(card)),
                ("H", "First responder", responder(card)))
    for letter, title, lines in sections[:2]:
        out += _section(letter, title, lines)
    out.append("C  Signs and symptoms")
    for column in card.c_vitals:
        cells = [(label, vitals_cell(column, kind)) for kind, label in VITAL_ROWS]
        time = column.time if column.spoken else f"logged {column.time}"
        out.append(f"   [{time}] " + "; ".join(f"{label}: {cell[0]}{_mark(cell[1])}" for label, cell in cells if cell))
    if not card.c_vitals:
        out.append("   (blank)")
    for letter, title, lines in sections[2:]:
        out += _section(letter, title, lines)
    return "\n".join(out) + "\n"


def _mark(entry: Entry) -> str:
    return " [UNCONFIRMED]" if entry.status == "unconfirmed" else ""


def _section(letter: str, title: str, lines: list[Line]) -> list[str]:
    body = [f"   {line.label}: {line.value}" + (" [UNCONFIRMED]" if line.unconfirmed else "") for line in lines]
    return [f"{letter}  {title}", *(body or ["   (blank)"])]
