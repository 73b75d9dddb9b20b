"""Section C signs: pulse (rate and where it was felt), blood pressure, respiratory rate, SpO2, AVPU, pain 0-10.

A reading is a vital's word followed by its number, past the words a medic puts between ("pulse 110", "BP 120/80",
"sats dropped to 82", "pulse ox reads eighty eight on room air", "pain's a six", "resp rate twenty", "HR 130",
"resps two four" on the radio), in its own clause. A blood pressure palpated ("BP palp 90", "BP's eighty palp") or
said with one number is the systolic alone. A vital said without a number is reported as incomplete: the extractor
keeps it only as a note of something absent or failed ("no pulse in the left wrist", "denies pain", "couldn't get a
BP"). "responds to pain" is AVPU, never a pain score; "pulse ox" is saturation, never a pulse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from tcccd.plugins.card.finding import Finding, said, spanning
from tcccd.plugins.card.lexicon import (
    AVPU,
    BP_WORDS,
    PULSE_LOCATIONS,
    PULSE_SITES,
    PULSE_WORDS,
    RR_WORDS,
    SPO2_WORDS,
    alternation,
    pattern,
)
from tcccd.plugins.card.numbers import iter_numbers
from tcccd.plugins.card.sentences import Sentence, first_number
from tcccd.wire.card_events import Avpu, BloodPressure, Pain, Pulse, RespiratoryRate, SpO2

_FILLER = re.compile(r"(?:[\s:,]*\b(?:is|was|are|were|of|at|now|about|around|approximately|roughly|rate|still|reads?|"
                     r"reading|dropped|dropping|down|up|to|came|went|climbing|holding|steady|present|palpable|strong|"
                     r"weak|thready|only|just|a|an|been|has|had|on|room|air|by|palp|palpated|palpation|remains|"
                     r"'s|’s|stable|improved|improving|back|sitting|running|measured|and|there|bounding|regular|"
                     r"irregular|rapid|fast|slow|faint|fair|good|okay|ok|rate['’]s|shallow|labored|laboured|deep|"
                     r"unlabored|even|increased|decreased|elevated|low|high|from|rose|fell|climbed|says|say|shows|showing|like|it|gone|"
                     r"the|with|box|monitor|screen|"
                     r"maybe|probably|cuff|manual|manually|uh|um|er|erm)\b|"
                     r"['’]s\b)*[\s:,]*")
_CLOCK = re.compile(r"\d{4}")  # four digits written: a clock time, never a reading
_AT_CLOCK = re.compile(r"(?:\d{4}|(?:oh|zero)(?:[\s-]+(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                       r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|"
                       r"fifty|hundred|\d+)){1,3})\b")  # a clock time said after "at": "at 0930", "at oh nine forty"
_FROM_TO = re.compile(r"\s*(?P<was>\S+(?:\s+\S+){0,3}?)\s+(?:to|down\s+to|up\s+to)\s+")  # "from 120 to 90"
_PULSE = re.compile(alternation(PULSE_WORDS) + r"(?!\s+ox)")
_LOCATION = re.compile(r"(?:\b(left|right)\s+)?\b(" + "|".join(PULSE_LOCATIONS) + r")\b")
_DENIED = re.compile(r"\b(?:no|not|without|absent|lost(?:\s+the)?|can't\s+feel|couldn't\s+feel)\s+(?:a\s+|the\s+)?$")
_SITE = re.compile(r"(?:\b(?:left|right)\s+)?" + alternation(PULSE_SITES) + r"(?!\s+pulses?\b)")
# a location said before the pulse word is its own only next to it ("weak radial pulse"), not a wound said before
_NEXT_TO = re.compile(r"(?:\s|['’]s\b|\b(?:at|the|his|her|on|in|a|weak|strong|thready|bounding)\b)*")
_AFTER_CHARS = 30  # "pulse 120, no radial though, that's carotid"; not the neck a dressing went in later
_NUMBER_FIRST = re.compile(r"\s*(?:an?\s+)?$")  # "a hundred and twelve heart rate": the reading said first
_OVER = re.compile(r"(?:-?ish)?,?\s+over,?\s+(?:(?:uh|um|er|erm),?\s+)?")  # "ninety-ish over sixty", "over, uh, sixty"
_OVER_PALP = re.compile(r"(?<![\w./])(\d{2,3})\s+over\s+(?:palp|palpation|palpated)\b")
_BP = re.compile(alternation(BP_WORDS))
_RATIO = re.compile(r"(\d{2,3})\s*/\s*(\d{2,3})\b")
_PRESSURE = re.compile(r"(?<!blood\s)\bpressure\b")
_TO_RATIO = re.compile(r"\s+(?:up\s+|down\s+)?to\s+(\d{2,3})\s*/\s*(\d{2,3})\b", re.IGNORECASE)
_PALP = re.compile(r"\b(?:palp|palpated|palpation|palpable|by\s+palp(?:ation)?)\b")
_SYSTOLIC = re.compile(r"\bsystolic\b")
_BY_PALP = re.compile(r"\s+(?:by\s+)?(?:palp|palpated|palpation)\b")
_HE_IS = re.compile(r"\b(?:he['’]s|she['’]s|he\s+is|she\s+is)\s+(?:(?:now|at|only|still|about|around)\s+)*$")
_RR = re.compile(alternation(RR_WORDS))
_BREATHS = re.compile(r"(?<![\w.])(\d+)\s+breaths\s+(?:per|a)\s+minute")
_SPO2 = pattern(SPO2_WORDS)
_AVPU = pattern(AVPU)
_PAIN = re.compile(r"(?<!\bto\s)(?<!\bfor\s)\bpain(?!ful|\s+(?:meds?|medication|management|control|relief))\b"
                   r"(?:\s+(?:score|scale|level))?(?:\s+(?:in|on)\s+(?:the|his|her|my)\s+(?:(?:left|right)\s+)?[a-z]+)?")
# "pain's gone from an eight to a three": the level it went to
_WENT_TO = re.compile(r"\s*(?:down\s+|up\s+)?to\s+(?:an?\s+)?")
_ALERT_SUBJECT = re.compile(r"\b(?:is|he's|she's|he’s|she’s|patient|casualty|pt|remains|now|was|been|appears|awake|"
                            r"still|with\s+it,?)\s+$|^\s*(?:casualty|patient)\s+\w+\s+$")  # "he's with it, alert"
_ALERT_VERB = re.compile(r"\b(?:stay|be|keep|on|high|remain)\s+$")
_NOT_AVPU_ALERT = re.compile(r"\s+(?:the|them|him|her|everyone|all|for|to|command|medevac|qrf|platoon|team|"
                             r"squad|us)\b")
_READING = re.compile(r"\b(?:pulse|bp|blood\s+pressure|sats?|spo2|respiratory\s+rate|respirations|rr|hr|resps?|"
                      r"pain)(?:['’]s)?\s+\w")
# how a casualty reacts, and to what: "groans to pain", "only moans to a sternal rub", "opens his eyes to his name"
_REACTS = re.compile(r"\b(?:respond(?:s|ing)?|react(?:s|ing)?|a?rousable|withdraw(?:s|ing)?|moan(?:s|ing)?|"
                     r"groan(?:s|ing)?|grimac(?:es|ing)|flinch(?:es|ing)?|localiz(?:es|ing)|opens\s+(?:his\s+|her\s+)?eyes)\s+"
                     r"(?:only\s+)?to\s+(?P<to>pain|painful\s+stimul\w*|(?:a\s+)?sternal\s+rub|voice|verbal\w*|"
                     r"(?:his|her)\s+name|commands|speech)\b")
# a reaction said with what brings it on: "he'll open his eyes if you yell at him", "pulls away when I pinch him";
# the condition is part of the finding's words, so "if"/"when"/"'ll" say how he reacts, not a plan or a condition
_REACTS_WHEN = re.compile(r"(?:\b(?:he|she)(?:['’]ll|\s+will)\s+)?\b(?:opens?\s+(?:his\s+|her\s+)?eyes|"
                          r"pull(?:s|ing)?\s+away|"
                          r"withdraw(?:s|ing)?|moan(?:s|ing)?|groan(?:s|ing)?|grimac(?:es|ing)|flinch(?:es|ing)?|mumbles?|squeezes?\s+(?:my|your)\s+hand|"
                          r"answers?)\s+(?:only\s+)?(?:if|when)\s+(?:you|i|we|someone|somebody)\s+"
                          r"(?:(?P<v>yell|shout|talk|speak|call|say|tell|ask)|pinch|rub|squeeze|press|poke|grind)")
# the level said by its letter, of him now: "he's a V", "she's an A" (written as the letter, in capitals)
_LETTER = re.compile(r"(?i:\b(?:he|she|patient|casualty)(?:['’]s|\s+is)\s+(?:now\s+|only\s+|just\s+|still\s+)?an?)\s+"
                     r"(?P<l>[AVPU])\b(?![’'&-])")
_VERBAL = ("voice", "verbal", "verbal stimuli", "verbal stimulus", "his name", "her name", "commands", "speech")
_RADIO_DIGITS = re.compile(r"[1-9]\d{1,2}")  # a reading said digit by digit, as on the radio
_ZERO_TO_TEN = re.compile(r"\b(?:zero|one|0|1)\s+to\s+(?:ten|10)\b")
_SAID_OUT_OF_TEN = re.compile(r"\s+out\s+of\s+(?:10|ten)\b")  # "an eight out of ten": a pain score however said
_OUT_OF_TEN = re.compile(r"\s*(?:out\s+of\s+(?:10|ten)|of\s+(?:10|ten)|/\s*10)")


def _number_after(s: Sentence, end: int, until: int | None = None) -> tuple[float, int, int] | None:
    """The number said right after a vital's word, past filler words ('pulse is about 110', 'sats dropped to 82',
    'pulse ox reads eighty eight'), within its clause."""
    until = s.clause_of(end)[1] if until is None else until
    filler = _FILLER.match(s.lower, end, until)
    at = filler.end() if filler else end
    clock = _AT_CLOCK.match(s.lower, at, until) if s.lower[end:at].rstrip().endswith("at") else None
    if clock:  # "BP at oh nine forty was eighty palp": the time it was taken, then the reading
        filler = _FILLER.match(s.lower, clock.end(), until)
        at = filler.end() if filler else clock.end()
    number = first_number(s.text, at, until)
    if number is not None and number.value is None and _RADIO_DIGITS.fullmatch(number.digits):
        number = replace(number, value=float(number.digits))  # "sats niner four", "resps two four": on the radio
    if number is None or number.start != at or number.value is None or _CLOCK.fullmatch(s.text, number.start,
                                                                                          number.end):
        return None  # "denies pain, at 1140, ...": a clock time is no reading
    moved = _FROM_TO.match(s.lower, number.start, until) if re.search(r"\bfrom\b", s.lower[end:at]) else None
    later = first_number(s.text, moved.end(), until) if moved and moved.start("was") == number.start and \
        moved.end("was") == number.end else None
    if later is not None and later.start == moved.end() and later.value is not None:  # type: ignore[union-attr]
        return later.value, later.start, later.end  # "pulse dropped from one twenty to ninety": now ninety
    return number.value, number.start, number.end


_BETWEEN = re.compile(r"\bbetween\b[^,;.]*$")  # "somewhere between ninety and a hundred systolic": a range, no reading
_HEAD = re.compile(r"[\s,]*(?:(?:he|she)(?:['’]s|\s+is|\s+was)\s+)?(?:(?:at|about|around)\s+)?")


def _number_before(s: Sentence, start: int) -> tuple[float, int, int] | None:
    """A reading said before its vital's word, alone at the head of its clause ("a hundred and twelve heart rate",
    "he's at eighty five systolic");
    never four digits, a clock time ("0930 pulse 110"), nor the minutes of one ("at 9:58 resps picking up")."""
    clause_start = s.clause_of(start)[0]
    number = first_number(s.text, clause_start, start)
    if number is None or number.value is None or not _HEAD.fullmatch(s.lower, clause_start, number.start) or \
            _BETWEEN.search(s.lower, s.start, number.start) or \
            _CLOCK.fullmatch(s.text, number.start, number.end) or s.text.endswith(":", 0, number.start) or \
            not _NUMBER_FIRST.fullmatch(s.lower, number.end, start):
        return None
    return number.value, number.start, number.end


def pulses(s: Sentence) -> Iterator[Finding]:
    """'pulse 110', 'HR 130', 'radial's weak, about a hundred and thirty', 'carotid only, rate's about one forty':
    a pulse site said alone is the pulse felt there."""
    worded = list(s.find(_PULSE))
    clauses = {s.clause_of(w.start()) for w in worded}
    sites = [m for m in s.find(_SITE)  # a site said with a worded pulse and no reading of its own is its location
             if _number_after(s, m.end()) or s.clause_of(m.start()) not in clauses]
    for match in sorted(worded + sites, key=lambda m: m.start()):
        clause_start, clause_end = s.clause_of(match.start())
        reading = _number_before(s, match.start()) or _number_after(s, match.end(), clause_end)
        where = _LOCATION.search(s.lower, match.start(), match.end()) if match in sites else \
            next((m for m in s.find(_LOCATION, clause_start, clause_end)
                  if not _DENIED.search(s.lower, clause_start, m.start()) and (  # next to it, or just after it
                      _NEXT_TO.fullmatch(s.lower, m.end(), match.start()) if m.start() < match.start() else
                      m.start() - (reading[2] if reading else match.end()) <= _AFTER_CHARS)), None)
        spans = [(match.start(), match.end())]
        spans += [(reading[1], reading[2])] if reading else []
        spans += [(where.start(), where.end())] if where else []
        location = said(where) if where else None
        yield spanning(Pulse(rate=reading[0] if reading else None, location=location),
                       "pulse" if reading else "pulse.incomplete", *spans)


def _diastolic(s: Sentence, systolic: tuple[float, int, int], clause_end: int) -> tuple[float, int] | None:
    """The number said after "over" right after a systolic reading, and where it ends."""
    over = _OVER.match(s.lower, systolic[2], clause_end)
    low = first_number(s.text, over.end(), clause_end) if over else None
    return (low.value, low.end) if low is not None and low.start == over.end() and low.value is not None else None  # type: ignore[union-attr]


def blood_pressures(s: Sentence) -> Iterator[Finding]:
    """'BP 120/80'; a palpated pressure ('BP palp 90', 'BP's eighty palp') or one number alone is the systolic only;
    'systolic 90' too."""
    for match in _OVER_PALP.finditer(s.lower, s.start, s.end):  # "eighty-two over palp"
        if not _BP.search(s.lower, *s.clause_of(match.start())):  # with its "BP", the BP's own reading below
            yield Finding(BloodPressure(systolic=float(match.group(1)), diastolic=None), match.start(), match.end(),
                          "bp.systolic")
    for number in iter_numbers(s.text, s.start, s.end):  # "right now he's ninety by palp": palpated, of him
        palp = _BY_PALP.match(s.lower, number.end)
        if palp and number.value and _HE_IS.search(s.lower, max(s.start, number.start - 16), number.start) and \
                not _BP.search(s.lower, *s.clause_of(number.start)) and \
                not _PRESSURE.search(s.lower, *s.clause_of(number.start)):
            yield spanning(BloodPressure(systolic=number.value, diastolic=None), "bp.systolic",
                           (number.start, palp.end()))
    for match in _PRESSURE.finditer(s.lower, s.start, s.end):  # "his pressure's 90/50", "... 70 palp": with its reading
        clause_end = s.clause_of(match.start())[1]
        filler = _FILLER.match(s.lower, match.end(), clause_end)
        ratio = _RATIO.match(s.text, filler.end() if filler else match.end(), clause_end)
        if ratio:
            yield spanning(BloodPressure(systolic=float(ratio.group(1)), diastolic=float(ratio.group(2))), "bp",
                           (match.start(), match.end()), (ratio.start(), ratio.end()))
            continue
        reading = _number_after(s, match.end(), clause_end)
        low = _diastolic(s, reading, clause_end) if reading else None
        if reading and low is not None:  # "his pressure's a hundred over sixty"
            yield spanning(BloodPressure(systolic=reading[0], diastolic=low[0]), "bp",
                           (match.start(), match.end()), (reading[1], low[1]))
            continue
        palp = _PALP.match(s.lower, reading[2] + 1) if reading else None  # "his pressure's seventy palp"
        if reading and palp and not s.lower[reading[2]:palp.start()].strip():
            yield spanning(BloodPressure(systolic=reading[0], diastolic=None), "bp.systolic",
                           (match.start(), match.end()), (reading[1], palp.end()))
    for match in [*s.find(_BP), *s.find(_SYSTOLIC)]:
        clause_end = s.clause_of(match.start())[1]
        filler = _FILLER.match(s.lower, match.end(), clause_end)
        at = filler.end() if filler else match.end()
        ratio = _RATIO.match(s.text, at, clause_end)
        moved = ratio is not None and "from" in s.lower[match.end():at]
        later = _TO_RATIO.match(s.text, ratio.end(), clause_end) if moved else None  # type: ignore[union-attr]
        ratio = later or ratio  # "BP from 90/60 to 110/70": now 110/70
        if ratio and _SYSTOLIC.match(s.lower, match.start()) is None:
            yield spanning(BloodPressure(systolic=float(ratio.group(1)), diastolic=float(ratio.group(2))), "bp",
                           (match.start(), match.end()), (ratio.start(), ratio.end()))
            continue
        reading = _number_after(s, match.end(), clause_end) or (
            _number_before(s, match.start()) if _SYSTOLIC.match(s.lower, match.start()) else None)
        if reading is None:
            yield Finding(BloodPressure(systolic=None, diastolic=None), match.start(), match.end(), "bp.incomplete")
            continue
        low = _diastolic(s, reading, clause_end)
        if low is not None:  # "one oh two over sixty": the words the number step left unwritten
            yield spanning(BloodPressure(systolic=reading[0], diastolic=low[0]), "bp",
                           (match.start(), match.end()), (reading[1], low[1]))
            continue
        palp = _PALP.search(s.lower, match.end(), min(clause_end, reading[2] + 20))
        extra = [(palp.start(), palp.end())] if palp else []
        yield spanning(BloodPressure(systolic=reading[0], diastolic=None), "bp.systolic",
                       (match.start(), match.end()), (reading[1], reading[2]), *extra)


def respiratory_rates(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_RR):
        reading = _number_before(s, match.start()) or _number_after(s, match.end())
        if reading:
            yield spanning(RespiratoryRate(rate=reading[0]), "rr", (match.start(), match.end()), reading[1:])
    for match in _BREATHS.finditer(s.lower, s.start, s.end):
        yield Finding(RespiratoryRate(rate=float(match.group(1))), match.start(), match.end(), "rr.breaths")


def saturations(s: Sentence) -> Iterator[Finding]:
    for match in s.find(_SPO2):
        reading = _number_before(s, match.start()) or _number_after(s, match.end())
        if reading:
            percent = re.compile(r"\s*(?:%|percent)").match(s.lower, reading[2], s.end)
            end = percent.end() if percent else reading[2]
            yield spanning(SpO2(percent=reading[0]), "spo2", (match.start(), match.end()), (reading[1], end))


def avpu(s: Sentence) -> Iterator[Finding]:
    """"alert" is AVPU when said of the casualty ("he is alert", "patient alert and oriented") or among readings
    ("pulse 120, alert"); "alert the team", "stay alert" are not. Every level said is reported, in order: the card
    keeps the latest ("was alert, now responding to pain": P)."""
    found = [(AVPU[said(m)], m) for m in s.find(_AVPU)]
    found += [("V" if m.group("to") in _VERBAL else "P", m) for m in _REACTS.finditer(s.lower, s.start, s.end)
              if not any(f.start() <= m.start() < f.end() for _, f in found)]
    found += [("V" if m.group("v") else "P", m) for m in _REACTS_WHEN.finditer(s.lower, s.start, s.end)]
    found += [(m.group("l"), m) for m in _LETTER.finditer(s.text, s.start, s.end)]
    for level, match in sorted(found, key=lambda f: f[1].start()):
        if level == "A" and not _alert_of_casualty(s, match):
            continue
        yield Finding(Avpu(level=level), match.start(), match.end(), "avpu")


def _alert_of_casualty(s: Sentence, match: re.Match) -> bool:
    clause_start, clause_end = s.clause_of(match.start())
    if _NOT_AVPU_ALERT.match(s.lower, match.end(), clause_end) or _ALERT_VERB.search(s.lower, clause_start,
                                                                                     match.start()):
        return False
    before = s.lower[clause_start:match.start()]
    return bool(_ALERT_SUBJECT.search(before) or not before.strip() or _READING.search(s.lower, s.start, s.end))


def pain(s: Sentence) -> Iterator[Finding]:
    """'Pain's a six', 'pain score 4/10'; and a score said out of ten with no word for pain ('He says the shoulder's
    an eight out of ten')."""
    scored = []
    for match in s.find(_PAIN):
        reading = _number_after(s, match.end())
        if reading is None:
            yield Finding(Pain(score=None), match.start(), match.end(), "pain.incomplete")
            continue
        went = _WENT_TO.match(s.lower, reading[2], s.end)
        later = first_number(s.text, went.end(), s.clause_of(went.end())[1]) if went else None
        if later is not None and later.start == went.end() and later.value is not None:
            reading = (later.value, reading[1], later.end)
        if _ZERO_TO_TEN.search(s.lower, match.end(), reading[2]):  # "ask him his pain, zero to ten": the scale
            yield Finding(Pain(score=None), match.start(), match.end(), "pain.incomplete")
            continue
        scale = _OUT_OF_TEN.match(s.lower, reading[2], s.end)
        scored.append(reading[1])
        yield spanning(Pain(score=reading[0]), "pain", (match.start(), match.end()),
                       (reading[1], scale.end() if scale else reading[2]))
    for number in iter_numbers(s.text, s.start, s.end):
        scale = _SAID_OUT_OF_TEN.match(s.lower, number.end, s.end)
        if scale and number.start not in scored and number.value is not None and 0 <= number.value <= 10:
            yield Finding(Pain(score=number.value), number.start, scale.end(), "pain.scored")
