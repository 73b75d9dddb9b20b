"""The card read back: a short spoken confirmation of what was just logged ("Tourniquet, left leg, zero nine fifteen").

The medic hears what went on the card without looking at a screen, so a
mis-heard entry is caught while the casualty is still in front of them. Each
event becomes a few words in the order said, built only from the event's own
fields (nothing the medic did not say is spoken either); times are said the way
a medic says them, digit pairs ("zero nine fifteen"), because a speech
synthesiser reads "0915" as a number. An entry the card shows unconfirmed (an
uncertain word, a value out of range) is read back with "check", a correction
with "corrected". Negated findings and dictated notes are not read back: they
go to the notes, in the medic's own words, and reading them would only repeat them.
"""

from __future__ import annotations

from typing import Any

from tcccd.card.exports.lines import AVPU_WORDS, num
from tcccd.wire.card_events import Event

ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty")
UNITS = {"g": "gram", "mg": "milligrams", "mcg": "micrograms", "mL": "milliliters", "L": "liters", "unit": "units"}
ROUTES = {"IV": "I V", "IO": "I O", "IM": "I M", "PO": "by mouth", "IN": "intranasal", "SL": "sublingual",
          "OTFC": "lozenge"}
NAMES = {"TXA": "T X A", "NPA": "N P A", "SGA": "S G A", "CRIC": "cric", "O2": "oxygen", "IV": "I V", "IO": "I O",
         "GSW": "gunshot wound", "IED": "I E D", "MVC": "vehicle crash", "RPG": "R P G", "HPMK": "hypothermia kit"}
MAX_EVENTS = 6  # a long dictation is read back by its first entries and a count: the medic keeps working


def spoken_time(hhmm: str) -> str:
    """'0915' -> 'zero nine fifteen', '1400' -> 'fourteen hundred', '0905' -> 'zero nine zero five'."""
    hours, minutes = int(hhmm[:2]), int(hhmm[2:])
    said_hours = f"zero {ONES[hours]}" if hours < 10 else _two_digits(hours)
    if minutes == 0:
        return f"{said_hours} hundred"
    return f"{said_hours} {'zero ' + ONES[minutes] if minutes < 10 else _two_digits(minutes)}"


def _two_digits(value: int) -> str:
    if value < 20:
        return ONES[value]
    tens, ones = divmod(value, 10)
    return TENS[tens] + (f" {ONES[ones]}" if ones else "")


def _name(value: Any) -> str:
    text = str(value)
    return NAMES.get(text, text)


def _dose(amount: float | None, unit: str | None) -> str:
    if amount is None:
        return ""
    word = UNITS.get(unit or "", unit or "")
    return f"{num(amount)} {word if amount != 1 else word.removesuffix('s')}".strip()


def _words(event: Event) -> list[str]:
    """The event's fields as words, in the order a medic says them; [] for what is not read back."""
    w, kind = event.what, event.kind
    simple = {
        "casualty": lambda: [f"Casualty {num(w.number)}"],
        "evacuation": lambda: [f"Evac {w.category}"],
        "mobility": lambda: [w.mobility],
        "battle_roster": lambda: ["Battle roster", " ".join(w.number or "")],
        "last_four": lambda: ["Last four", " ".join(w.digits or "")],
        "allergies": lambda: ["Allergies", "none known" if w.allergies == "NKA" else w.allergies],
        "mechanism": lambda: [_name(w.mechanism)],
        "injury": lambda: [w.injury, w.region],
        "burn_extent": lambda: [f"Burns {num(w.percent)} percent"],
        "tourniquet": lambda: ["Tourniquet", w.limb or w.category, w.device],
        "dressing": lambda: [f"{w.dressing or ''} dressing".strip().capitalize(), w.site],
        "airway": lambda: ["Airway", _name(w.airway)],
        "breathing": lambda: [_name(w.breathing), w.side],
        "access": lambda: [_name(w.access), w.site],
        "fluid": lambda: [w.product, _dose(w.volume, w.unit), ROUTES.get(w.route or "", w.route)],
        "medication": lambda: [_name(w.name), _dose(w.dose, w.unit), ROUTES.get(w.route or "", w.route)],
        "pulse": lambda: [f"Pulse {num(w.rate)}" if w.rate is not None else "Pulse", w.location],
        "bp": lambda: [f"B P {num(w.systolic)} over {num(w.diastolic)}" if w.diastolic is not None
                       else f"B P {num(w.systolic)}"],
        "rr": lambda: [f"Respirations {num(w.rate)}"],
        "spo2": lambda: [f"Sats {num(w.percent)} percent"],
        "avpu": lambda: [AVPU_WORDS.get(w.level or "", "")],
        "pain": lambda: [f"Pain {num(w.score)}"],
        "hypothermia": lambda: ["Hypothermia prevention"],
        "eye_shield": lambda: ["Eye shield", w.side],
        "splint": lambda: ["Splint", w.site],
        "pill_pack": lambda: ["Pill pack"],
        "responder": lambda: ["Responder", w.name],
    }
    build = simple.get(kind)
    return [] if build is None else [str(part) for part in build() if part not in (None, "")]


def readback_text(events: list[Event]) -> str:
    """What to say for the events just logged, '' when none is read back."""
    phrases = []
    for event in events:
        if event.negated or event.kind == "note":
            continue
        words = _words(event)
        if not words:
            continue
        if event.time.at_hhmm and event.kind != "casualty":
            words.append(spoken_time(event.time.at_hhmm))
        phrase = ", ".join(words)
        if event.correction:
            phrase = f"Corrected, {phrase}"
        if event.uncertain or event.out_of_range:
            phrase += ", check"
        phrases.append(phrase)
    if len(phrases) > MAX_EVENTS:
        phrases = [*phrases[:MAX_EVENTS], f"and {len(phrases) - MAX_EVENTS} more"]
    return ". ".join(phrases) + ("." if phrases else "")
