"""Section C signs: pulse (rate and where it was felt), blood pressure, respiratory rate, SpO2, AVPU, pain 0-10.

A reading is a vital's word followed by its number ("pulse 110", "BP 120/80",
"sats 92%", "pain seven out of ten"). A vital said without a number is reported
as incomplete: the extractor keeps it only when negated ("no pulse in the left
wrist", "denies pain"), and then only as a note. "responds to pain" is AVPU,
never a pain score; "pulse ox" is saturation, never a pulse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tcccd.plugins.card.finding import Finding, said, spanning
from tcccd.plugins.card.lexicon import (
    AVPU,
    BP_WORDS,
    PULSE_LOCATIONS,
    PULSE_WORDS,
    RR_WORDS,
    SPO2_WORDS,
    alternation,
    pattern,
)
from tcccd.plugins.card.sentences import Sentence, numbers_in
from tcccd.wire.card_events import Avpu, BloodPressure, Pain, Pulse, RespiratoryRate, SpO2

_FILLER = r"(?:\s+(?:is|was|of|at|now|about|around|approximately|rate|down\s+to|up\s+to))*[\s:]*"
_PULSE = re.compile(alternation(PULSE_WORDS) + r"(?!\s+ox)")
_LOCATION = re.compile(r"(?:\b(left|right)\s+)?\b(" + "|".join(PULSE_LOCATIONS) + r")\b")
_BP = re.compile(alternation(BP_WORDS) + _FILLER + r"(\d{2,3})\s*/\s*(\d{2,3})\b")
_SYSTOLIC = re.compile(r"\bsystolic" + _FILLER + r"(\d{2,3})\b|\b(\d{2,3})\s+systolic\b")
_RR = re.compile(alternation(RR_WORDS))
_BREATHS = re.compile(r"(?<![\w.])(\d+)\s+breaths\s+(?:per|a)\s+minute")
_SPO2 = pattern(SPO2_WORDS)
_AVPU = pattern(AVPU)
_PAIN = re.compile(r"(?<!\bto\s)(?<!\bfor\s)\bpain(?!ful|\s+(?:meds?|medication|management|control|relief))\b"
                   r"(?:\s+(?:score|scale|level))?")
_ALERT_SUBJECT = re.compile(r"\b(?:is|he's|she's|patient|casualty|pt|remains|now|was|appears|awake)\s+$|"
                            r"^\s*(?:casualty|patient)\s+\w+\s+$")
_ALERT_VERB = re.compile(r"\b(?:stay|be|keep|on|high|remain)\s+$")
_NOT_AVPU_ALERT = re.compile(r"\s+(?:the|them|him|her|everyone|all|for|to|command|medevac)\b")
_READING = re.compile(r"\b(?:pulse|bp|blood\s+pressure|sats?|spo2|respiratory\s+rate|respirations|rr|hr)\s+\d")
_OUT_OF_TEN = re.compile(r"\s*(?:out\s+of\s+(?:10|ten)|of\s+(?:10|ten)|/\s*10)")


def _number_after(s: Sentence, end: int) -> tuple[float, int, int] | None:
    """The number said right after a vital's word, past filler words ('pulse is about 110')."""
    filler = re.compile(_FILLER).match(s.lower, end, s.end)
    at = filler.end() if filler else end
    number = next(iter(numbers_in(s.text, at, s.end)), None)
    if number is None or number.start != at or number.value is None:
        return None
    return number.value, number.start, number.end


def pulses(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_PULSE):
        reading = _number_after(s, match.end())
        clause_start, clause_end = s.clause_of(match.start())
        following = [c for c in s.clauses if c[0] >= clause_end][:1]
        where_end = following[0][1] if following and not numbers_in(s.text, *following[0]) else clause_end
        where = next(s.find(_LOCATION, clause_start, where_end), None)
        spans = [(match.start(), match.end())]
        spans += [(reading[1], reading[2])] if reading else []
        spans += [(where.start(), where.end())] if where else []
        location = said(where) if where else None
        yield spanning(Pulse(rate=reading[0] if reading else None, location=location),
                       "pulse" if reading else "pulse.incomplete", *spans)


def blood_pressures(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_BP):
        yield Finding(BloodPressure(systolic=float(match.group(1)), diastolic=float(match.group(2))),
                      match.start(), match.end(), "bp")
    for match in s.find(_SYSTOLIC):
        yield Finding(BloodPressure(systolic=float(match.group(1) or match.group(2)), diastolic=None),
                      match.start(), match.end(), "bp.systolic")


def respiratory_rates(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_RR):
        reading = _number_after(s, match.end())
        if reading:
            yield spanning(RespiratoryRate(rate=reading[0]), "rr", (match.start(), match.end()), reading[1:])
    for match in _BREATHS.finditer(s.lower, s.start, s.end):
        yield Finding(RespiratoryRate(rate=float(match.group(1))), match.start(), match.end(), "rr.breaths")


def saturations(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_SPO2):
        reading = _number_after(s, match.end())
        if reading:
            percent = re.compile(r"\s*(?:%|percent)").match(s.lower, reading[2], s.end)
            end = percent.end() if percent else reading[2]
            yield spanning(SpO2(percent=reading[0]), "spo2", (match.start(), match.end()), (reading[1], end))


def avpu(s: Sentence) -> Iterator[Finding]:
    """"alert" is AVPU when said of the casualty ("he is alert", "patient alert and oriented") or among readings
    ("pulse 120, alert"); "alert the team", "stay alert" are not."""
    for match in s.find(_AVPU):
        level = AVPU[said(match)]
        if level == "A" and not _alert_of_casualty(s, match):
            continue
        yield Finding(Avpu(level=level), match.start(), match.end(), "avpu")
        return


def _alert_of_casualty(s: Sentence, match: re.Match) -> bool:
    clause_start, clause_end = s.clause_of(match.start())
    if _NOT_AVPU_ALERT.match(s.lower, match.end(), clause_end) or _ALERT_VERB.search(s.lower, clause_start,
                                                                                     match.start()):
        return False
    before = s.lower[clause_start:match.start()]
    return bool(_ALERT_SUBJECT.search(before) or not before.strip() or _READING.search(s.lower, s.start, s.end))


def pain(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_PAIN):
        reading = _number_after(s, match.end())
        if reading is None:
            yield Finding(Pain(score=None), match.start(), match.end(), "pain.incomplete")
            continue
        scale = _OUT_OF_TEN.match(s.lower, reading[2], s.end)
        yield spanning(Pain(score=reading[0]), "pain", (match.start(), match.end()),
                       (reading[1], scale.end() if scale else reading[2]))
