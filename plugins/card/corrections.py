"""Corrections as a medic says them: a cue ("correction", "scratch that", "I mean", "sorry", "make that", "no wait",
"actually"), then the restatement.

What follows the cue restates either a whole entry ("Correction, resp rate
twelve": the rules find it, and it replaces the casualty's latest entry of its
kind) or only the slot being changed ("Tourniquet right leg. Correction, left
leg.", "Pulse one thirty, scratch that, one ten", "Ketamine 50 mg IM. Correction,
25 mg.", "Chest seal on the left, I mean right."). A slot alone is read here and
laid over the last entry said, which is copied with it: the new entry replaces
that one and keeps the rest (25 mg, still IM, still at its time). The last entry
may be in an earlier transcript: the card stage keeps no state, so the daemon
carries it (tcccd.wire.card_stage.Carry). A cue with nothing after it
("Correction." said alone) leaves the correction pending for what is said next.
A retraction that names nothing ("Take that off his card, he spat it out")
takes back the last entry said.
"""

from __future__ import annotations

import re
from typing import Any

from tcccd.plugins.card.assertion import SentenceContext
from tcccd.plugins.card.clock_words import minutes_ahead
from tcccd.plugins.card.context import Said, valid_hhmm
from tcccd.plugins.card.context_rules import ContextRules
from tcccd.plugins.card.finding import regions, side_in
from tcccd.plugins.card.lexicon import AVPU, EVAC_CATEGORIES, MOBILITY, pattern
from tcccd.plugins.card.phrases import Word
from tcccd.plugins.card.rules_given import amounts, route
from tcccd.plugins.card.sentences import Sentence, numbers_in

RETRACTED = "retracted"  # the category of the words that take an entry back (profiles/card/context.yaml)
_CATEGORY = pattern(EVAC_CATEGORIES)
_MOBILITY = pattern(MOBILITY)
_AVPU = pattern(AVPU)
_SLOT_ONLY = re.compile(r"[\s,]*(?:[\w.%/-]+\s+){0,3}?(?:\d[\d.%/]*|left|right|(?:zero|oh|one|two|three|four|five|"
                        r"six|seven|eight|nine|ten|eleven|twelve|[a-z]+teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
                        r"hundred)(?:[\s-]+(?:one|two|three|four|five|six|seven|eight|nine|oh|hundred))*)\s*[,;]\s*"
                        r"(?:(?:and\s+)?then\s+|and\s+)?")
_FIRST_NUMBER = {"pulse": "rate", "rr": "rate", "spo2": "percent", "pain": "score", "burn_extent": "percent",
                 "medication": "dose", "fluid": "volume"}


NEAR_MIN = 90  # a restated time this close to the entry's own is that time put right
DOSE_RESTATED_MAX = 10  # "TXA 2 g at 2220, no, 2228": a number 1114 times the dose puts the time right, not the dose
_PLACED = {"injury": "region", "dressing": "site", "splint": "site", "access": "site"}  # where a side is said


def restated(s: Sentence, start: int, end: int, last: Any, said: list[Said]) -> tuple[Any, Said | None] | None:
    """The last entry (`what`) with the slots said in text[start:end] laid over it, and the time said there; None
    when nothing there restates one of its slots."""
    kind, update = last.kind, {}
    when = next((t for t in said if start <= t.start < end), None)
    taken = [(when.start, when.end)] if when else []
    found = [a for a in amounts(s, start, end) if not _inside(a.start, taken)]
    amount = found[0] if found else None
    taken += [(amount.start, amount.end)] if amount else []
    numbers = [n for n in numbers_in(s.text, start, end) if n.value is not None and not _inside(n.start, taken)]
    way = route(s, start, end)
    place = next(iter(regions(s, start, end)), None)
    side = side_in(s, start, end)
    if kind in ("medication", "fluid"):
        field, unit_field = ("dose", "unit") if kind == "medication" else ("volume", "unit")
        if amount is not None:
            update |= {field: amount.value, unit_field: amount.unit or getattr(last, unit_field)}
            update |= {"dose_to": amount.upto} if kind == "medication" else {}
        elif numbers:
            update[field] = numbers[0].value
        if way is not None:
            update["route"] = way[0]
    elif kind == "tourniquet" and place is not None and place.limb is not None:
        update |= {"limb": place.limb, "category": "extremity" if last.category in (None, "extremity") else
                   last.category}
    elif kind == "tourniquet" and side is not None and side[0] in ("left", "right") and last.limb is not None:
        update["limb"] = f"{side[0]} {last.limb.split()[-1]}"  # "TQ on the left arm. Not the left, the right."
    elif kind in ("breathing", "eye_shield") and side is not None:
        update["side"] = side[0]
    elif kind in ("dressing", "splint", "access") and place is not None:
        update["site"] = place.name
    elif kind == "injury" and place is not None:
        update["region"] = place.name
    elif kind in _PLACED and side is not None and side[0] in ("left", "right") and getattr(last, _PLACED[kind]):
        part = getattr(last, _PLACED[kind]).removeprefix("left ").removeprefix("right ")
        update[_PLACED[kind]] = f"{side[0]} {part}"  # "Lac on the left scalp." "Correction, right side."
    elif kind == "bp" and numbers:
        update |= {"systolic": numbers[0].value, "diastolic": numbers[1].value if len(numbers) > 1 else None}
    elif kind in _FIRST_NUMBER and numbers:
        update[_FIRST_NUMBER[kind]] = numbers[0].value
    elif kind in ("evacuation", "mobility", "avpu"):
        update |= _word_value(s, start, end, kind)
    elif kind == "last_four":
        digits = "".join(n.digits for n in numbers_in(s.text, start, end))
        update |= {"digits": digits} if len(digits) == 4 else {}
    if kind == "pulse" and side is None and place is not None:
        update.setdefault("location", place.name)
    if not update and when is None:
        return None
    return last.model_copy(update=update), when


def slot_clause(s: Sentence, start: int, end: int) -> bool:
    """text[start:end], said after a correction cue and before the next mention, is a clause of its own that holds a
    number or a side and few other words ("Sats 93, no, 91, resps 22": the 91 restates the sats, and the resps are
    new; "no, left leg TQ" is no such clause: it names what it restates)."""
    return _SLOT_ONLY.fullmatch(s.lower, start, end) is not None


def time_restated(s: Sentence, start: int, end: int, said: list[Said], last: Any) -> list[Said]:
    """'TXA went in at ten oh two.' 'Correction, ten oh six.': a clock number near the entry's own time, where no
    time was read, restates that time (not the dose: 1006 mg of TXA was never said). Of an entry with a dose or
    volume, only a number said as a clock ('oh nine forty', '0940') or one no restated dose could be (over ten times
    the dose: 'TXA 2 g at 2220, no, 2228') is: 'Tylenol 500 at 0930. Correction, 1000.' may be either."""
    spoken = last.spoken
    if spoken is None or not spoken.isdigit() or any(start <= t.start < end for t in said):
        return []
    amount = getattr(last.what, "dose", None) or getattr(last.what, "volume", None)
    for number in numbers_in(s.text, start, end):
        if amount and not (number.digits.startswith("0") or s.lower.startswith(("oh ", "zero "), number.start)) \
                and number.value is not None and number.value <= DOSE_RESTATED_MAX * amount:
            continue
        digits = number.digits if len(number.digits) == 4 else "0" + number.digits
        if len(digits) == 4 and valid_hhmm(digits) and \
                min(minutes_ahead(digits, spoken), minutes_ahead(spoken, digits)) <= NEAR_MIN:
            return [Said(digits, None, number.start, number.end)]
    return []


def _word_value(s: Sentence, start: int, end: int, kind: str) -> dict[str, str]:
    rx, table, field = {"evacuation": (_CATEGORY, EVAC_CATEGORIES, "category"),
                        "mobility": (_MOBILITY, MOBILITY, "mobility"), "avpu": (_AVPU, AVPU, "level")}[kind]
    match = next(s.find(rx, start, end), None)
    return {field: table[re.sub(r"\s+", " ", match.group())]} if match else {}


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def takes_back_the_last(rules: ContextRules, s: Sentence, said: list[Word]) -> bool:
    """A sentence that names nothing the card knows and says a retraction ("Take that off his card")."""
    return any(hit.category == RETRACTED for hit in SentenceContext(rules, s, [], said).hits)
