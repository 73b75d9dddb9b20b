"""A casualty card as a set of fields, one line each, for comparing cards field by field.

    c1 B tourniquet[left leg].time = 0912
    c1 C vitals[~0914].pulse = 120
    c1 F medication[TXA] = 1 g (unconfirmed)

`c<casualty> <section> <item>[<key>].<attribute> = <value>`: the key names the
item (a limb, a drug, a vitals column: `HHMM` when the time was said, `~HHMM`
for the clock minute of the utterances); a second item with the same key is
`<key>#2`. An item's own line (no attribute) carries its main value, or `yes`
when it has none (a dose said as a range is `2-3 mg`); every other value said is a line of its own, its time
included. A field shown unconfirmed ends in ` (unconfirmed)`, so a flag missed or
added counts as a wrong field. Lines compare without case.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tcccd.wire.card import Card, CardSet, Entry

HEADER = {"battle_roster": "number", "last_four": "digits", "evac_category": "category", "mobility": "mobility",
          "allergies": "allergies"}
# list name on the card -> (section, item name, key attribute, main value)
LISTS = {
    ("b_injury", "injuries"): ("B", "injury", "region", "injury"),
    ("b_injury", "tourniquets"): ("B", "tourniquet", "limb|category", "category"),
    ("e_treatments", "hemorrhage"): ("E", "dressing", "dressing", "site"),
    ("e_treatments", "airway"): ("E", "airway", "airway", None),
    ("e_treatments", "breathing"): ("E", "breathing", "breathing", "side"),
    ("e_treatments", "access"): ("E", "access", "access", "site"),
    ("e_treatments", "fluids"): ("E", "fluid", "product", "volume"),
    ("f_medications", "medications"): ("F", "medication", "name", "dose"),
}
PLAIN_LISTS = {("b_injury", "mechanisms"): ("B", "mechanism", "mechanism"),
               ("f_medications", "hypothermia"): ("F", "hypothermia", "method"),
               ("f_medications", "eye_shields"): ("F", "eye_shield", "side"),
               ("f_medications", "splints"): ("F", "splint", "site"),
               ("f_medications", "pill_pack"): ("F", "pill_pack", None)}
SKIP = {"kind", "blood", "drug_class", "unit", "dose_to"}
VITALS = ("pulse", "bp", "rr", "spo2", "avpu", "pain")


def number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _value(what: Any, attribute: str | None) -> str:
    if attribute is None:
        return "yes"
    value = getattr(what, attribute)
    if value is None:
        return "yes"
    if attribute in ("volume", "dose"):
        upto = getattr(what, "dose_to", None) if attribute == "dose" else None
        amount = f"{number(value)}-{number(upto)}" if upto is not None else number(value)
        return f"{amount} {what.unit}" if what.unit else amount
    return number(value) if isinstance(value, float) else str(value)


def _line(prefix: str, value: str, entry: Entry) -> str:
    return f"{prefix} = {value}" + (" (unconfirmed)" if entry.status == "unconfirmed" else "")


def card_fields(card: Card) -> list[str]:
    c = f"c{card.casualty}"
    lines = []
    for name, attribute in HEADER.items():
        entry = getattr(card.a_header, name)
        if entry is not None:
            lines.append(_line(f"{c} A header.{name}", _value(entry.event.what, attribute), entry))
    if card.b_injury.burn_extent is not None:
        entry = card.b_injury.burn_extent
        lines.append(_line(f"{c} B burn_tbsa", number(entry.event.what.percent) + "%", entry))
    for (section, name), (letter, item, attribute) in PLAIN_LISTS.items():
        for entry in getattr(getattr(card, section), name):
            lines.append(_line(f"{c} {letter} {item}", _value(entry.event.what, attribute), entry))
    for (section, name), spec in LISTS.items():
        lines += _list_fields(c, getattr(getattr(card, section), name), *spec)
    for column in card.c_vitals:
        key = column.time if column.spoken else f"~{column.time}"
        for kind in VITALS:
            entry = getattr(column, kind)
            if entry is not None:
                lines += [_line(f"{c} C vitals[{key}].{name}", value, entry)
                          for name, value in _vital(entry.event.what)]
    lines += [_line(f"{c} G note", e.event.words.text, e) for e in card.g_notes]
    for name in ("name", "last_four"):
        entry = getattr(card.h_responder, name)
        if entry is not None:
            lines.append(_line(f"{c} H responder.{name}", getattr(entry.event.what, name), entry))
    return lines


def _list_fields(c: str, entries: list[Entry], letter: str, item: str, key_attribute: str,
                 main: str | None) -> list[str]:
    lines, seen = [], Counter[str]()
    for entry in entries:
        what = entry.event.what
        key = next((str(getattr(what, a)) for a in key_attribute.split("|") if getattr(what, a) is not None), "-")
        seen[key] += 1
        prefix = f"{c} {letter} {item}[{key}{'' if seen[key] == 1 else f'#{seen[key]}'}]"
        lines.append(_line(prefix, _value(what, main), entry))
        for attribute, value in what.model_dump().items():
            if attribute not in SKIP and attribute != main and attribute not in key_attribute.split("|") \
                    and value is not None:
                label = "type" if attribute == "device" else attribute
                lines.append(_line(f"{prefix}.{label}", _value(what, attribute), entry))
        if entry.event.time.at_hhmm is not None:
            lines.append(_line(f"{prefix}.time", entry.event.time.at_hhmm, entry))
    return lines


def _vital(what: Any) -> list[tuple[str, str]]:
    if what.kind == "pulse":
        return [("pulse", number(what.rate))] + ([("pulse_location", what.location)] if what.location else [])
    if what.kind == "bp":
        return [("bp", f"{number(what.systolic)}/{number(what.diastolic) if what.diastolic else '?'}")]
    if what.kind == "spo2":
        return [("spo2", number(what.percent) + "%")]
    value = {"rr": "rate", "avpu": "level", "pain": "score"}[what.kind]
    return [(what.kind, _value(what, value))]


def fields(cards: CardSet) -> set[str]:
    """Every field of every card, lower case."""
    return {line.lower() for card in cards.cards for line in card_fields(card)}


def expected_fields(text: str) -> set[str]:
    return {line.strip().lower() for line in text.splitlines() if line.strip()}
