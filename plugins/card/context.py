"""Which casualty what follows is for, and when things were said to happen.

Casualty switching, only in a switch phrase: "casualty two", "patient number
3", "back to casualty one", "back to two" (a clause of its own), "second
casualty", "back to the first guy", "next patient" (the current number plus one). A number after
"patient" is no switch when a determiner comes before ("gave the patient 2
units") or a unit after ("patient 2 units"): those are doses. "casualty
collection point" and "casualty is alert" switch nothing. The request says which
casualty is current; each switch said becomes an event and the current casualty
for what follows it. A casualty named in words no switch reads ("Act to Casual V1",
Whisper's "Back to casualty one") leaves what follows unconfirmed until a plain
switch: it may be another casualty's.

Times: a four-digit time counts when the ASR's number step wrote it as a time
(its `numbers[]` trail says rule "time") or when it is said as one ("at 0915",
"0915 hours", "at oh nine thirty", "due at ten twenty", "TQ time was ten twenty") or written with a leading zero
("TQ right arm 0905": no amount is said that way); digits after "last
four", "roster", "zap", a grid, a frequency or a call sign are never a time.
"five minutes ago", "half an hour ago", "a quarter of an hour ago" count back
from the utterance; "ten past nine", "half nine" are read on the 24-hour clock
nearest the utterance (clock_words.py). Which
event takes which time is the extractor's choice (tcccd.plugins.card.extract):
the time said in the event's own clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tcccd.plugins.card.clock_words import READING_WORDS, clock_words, minutes_ahead
from tcccd.plugins.card.fast_patterns import may_match_any
from tcccd.plugins.card.numbers import Number, first_number, iter_numbers
from tcccd.plugins.card.sentences import Sentence

MAX_CASUALTY = 999
_NAMED = re.compile(r"\b(?:back\s+to\s+|on\s+to\s+|moving\s+to\s+)?(?:casualty|patient|pt)\s+(?:number\s+|#\s*)?(?=\w)")
# "back to two", "I'm still on one"
_BACK_TO = re.compile(r"\b(?:back\s+to|(?:i['’]?m|we['’]?re)\s+still\s+(?:on|with))\s+(?:number\s+)?(?=\w)")
_ORDINAL = re.compile(r"\b(first|second|third|fourth|fifth|sixth)\s+(?:casualty|patient)\b|"
                      r"\b(?:back|going|go|moving|move|on|over|heading|switching|turning)\s+(?:on)?to\s+the\s+"
                      r"(first|second|third|fourth|fifth|sixth)\s+(?:guy|one|casualty|patient|man|soldier)\b")
_OPENING_ORDINAL = re.compile(r"(?:the\s+)?(first|second|third|fourth|fifth|sixth)\s+(?:guy|man|soldier|one)\s*[,.:;-]")
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}
_LEAD = re.compile(r"(?:(?:and|okay|ok|alright|all\s+right|now|so|then)\b[\s,]*)+")  # "And back to two"
_DETERMINER = re.compile(r"\b(?:the|a|an|this|that|his|her|our|your|their|each|every|same|other|my|another)\s+$")
_NOT_A_SWITCH_AFTER = re.compile(r"\s*(?:units?|g|mg|mcg|ml|l|cc|grams?|milligrams?|micrograms?|liters?|litres?|%|"
                                 r"percent|tourniquets?|ivs?|doses?|times|of)\b")
_NEXT = re.compile(r"\bnext\s+(?:casualty|patient)\b")
# Whisper writes "Casualty two." as "Casualty, too, ..." (tiny.en, the kit's own voice): read as a switch only where
# "too" cannot mean "also", the whole of a sentence's opening words ("Casualty too." / "Casualty, too, same blast")
_TOO = re.compile(r"\s*(?:casualty|patient)\s*,?\s+(too)\s*(?:[,.]|$)")
# "Back to casualty one" written "Act to Casual V1": a casualty named in words no switch reads. What follows may be
# another casualty's, so it is shown unconfirmed (on the casualty current) until a switch is said plainly.
_GARBLED = re.compile(r"\bcasual\b|\b(?:casualty|patient)\s+(?:number\s+|#\s*)?[a-z]+\d+\b")
_HHMM = re.compile(r"(?<![\w.:/])([01]\d|2[0-3])([0-5]\d)(?![\w/%]|[.:]\d)")  # "at 0930:" ends a time, "09:30.5" none
_COLON_TIME = re.compile(r"(?<![\w.:/])([01]?\d|2[0-3]):([0-5]\d)(?![\w/%]|[.:]\d)")  # "9:15", as the ASR writes one
_TIME_BEFORE = re.compile(r"\b(?:at|time|since|from|around|about|by|till|until|"
                          r"(?:update|reassessment|flowsheet|obs)\s*[,:])\s+$")  # "PFC update, thirteen hundred"
# "twenty one forty vitals, ...", "thirteen hundred reassessment", "twenty one hundred checks"
_TIME_AFTER = re.compile(r"\s*(?:hours|hrs|local|zulu|vitals|obs|reassessment|update|checks?|rechecks?|set|rounds)\b")
_OH_INSIDE = re.compile(r"[a-z]\s+oh\s+[a-z]")  # "nineteen oh five": a clock, never a quantity
# "Eleven hundred on Kim, pulse one hundred", "Twenty one hundred recheck on Dunn, pulse ninety four"
_TITLE = r"\s*(?:recheck|check|vitals|set|reassessment|update)\b"
_HEADING = re.compile(r"(?:" + _TITLE + r")?\s*(?:(?:on|for)\s+(?:the\s+)?[a-z]+\s*)?[,:]")
_TITLED = re.compile(_TITLE)
_TIME_WAS = re.compile(r"\btime\b[^,.;:]*?(?:\b(?:was|is|of)|,)\s+$")  # "TQ time on the left arm was ten twenty"
_NOT_TIME_BEFORE = re.compile(r"\b(?:last\s+(?:four|4)(?:\s+(?:is|are|digits|of))*|roster(?:\s+(?:number|#|is))*|"
                              r"zap(?:\s+(?:number|#|is))*|grid(?:\s+(?:to\s+\w+|is))*|freq(?:uency)?(?:\s+is)?|"
                              r"call\s+sign(?:\s+is)?|channel|room|checkpoint|bumper(?:\s+number)?|number)\s*:?\s*$")
_AT = re.compile(r"\bat\s+$")
_READING_BEFORE = re.compile(r"\b(?:" + READING_WORDS + r")\b[^,.;]*$")  # "pulse at one twenty" is a reading
_AGO = re.compile(r"\s+(?P<unit>minutes?|mins?|mikes?|hours?|hrs?)\s+ago\b")
_AN_AGO = re.compile(r"\b(?:an?\s+(?P<unit>minute|hour)|half\s+an\s+hour|"
                     r"(?P<quarter>(?:a\s+)?quarter\s+of\s+an\s+hour))\s+ago\b")


_SAYS_A_SWITCH = may_match_any([_NAMED, _BACK_TO, _ORDINAL, _OPENING_ORDINAL, _NEXT, _TOO, _GARBLED])


@dataclass(frozen=True)
class Switch:
    number: int | None  # None: "next", one more than the casualty current at that point
    start: int
    end: int
    garbled: bool = False  # a switch the recogniser garbled: which casualty follows is in doubt


def switches(s: Sentence) -> Iterator[Switch]:
    if not _SAYS_A_SWITCH(s.lower, s.start, s.end):
        return  # most sentences: no switch pattern below can match
    found = []
    for match in _NAMED.finditer(s.lower, s.start, s.end):
        if _DETERMINER.search(s.lower, max(s.start, match.start() - 12), match.start()):
            continue  # "gave the patient 2 units": a dose, not a switch
        number = first_number(s.text, match.end(), s.end)
        if _casualty_number(s, number, match.end()):
            found.append(Switch(int(number.value), match.start(), number.end))  # type: ignore[union-attr,arg-type]
    for match in _BACK_TO.finditer(s.lower, s.start, s.end):
        number = first_number(s.text, match.end(), s.end)
        clause = s.act_of(match.start())
        alone = number is not None and not s.lower[number.end:clause[1]].strip(" ,")
        lead = _LEAD.match(s.lower, clause[0], match.start())
        opens = (lead.end() if lead else clause[0]) == match.start()
        if opens and alone and _casualty_number(s, number, match.end()) and \
                not any(f.start <= match.start() < f.end for f in found):
            found.append(Switch(int(number.value), match.start(), number.end))  # type: ignore[union-attr,arg-type]
    found += [Switch(_ORDINALS[m.group(1) or m.group(2)], m.start(), m.end())
              for m in _ORDINAL.finditer(s.lower, s.start, s.end)]
    lead = _LEAD.match(s.lower, s.start, s.end)
    opening = _OPENING_ORDINAL.match(s.lower, lead.end() if lead else s.start, s.end)  # "Okay, second guy, ..."
    if opening and not any(f.start <= opening.start() < f.end for f in found):
        found.append(Switch(_ORDINALS[opening.group(1)], opening.start(), opening.end(1)))
    found += [Switch(None, m.start(), m.end()) for m in _NEXT.finditer(s.lower, s.start, s.end)]
    too = _TOO.match(s.lower, s.start, s.end)
    if too and not found:
        found.append(Switch(2, s.start + len(too.group(0)) - len(too.group(0).lstrip()), too.end(1)))
    found += [Switch(None, m.start(), m.end(), garbled=True) for m in _GARBLED.finditer(s.lower, s.start, s.end)
              if not any(f.start <= m.start() < f.end for f in found)]
    yield from sorted(found, key=lambda w: w.start)


def _casualty_number(s: Sentence, number: object, at: int) -> bool:
    value = getattr(number, "value", None)
    return number is not None and getattr(number, "start", -1) == at and value is not None and \
        1 <= value <= MAX_CASUALTY and value == int(value) and \
        not _NOT_A_SWITCH_AFTER.match(s.lower, getattr(number, "end", at))


@dataclass(frozen=True)
class Said:
    spoken: str | None  # "0915"
    relative_min: float | None  # -5 for "five minutes ago"
    start: int
    end: int
    heads: bool = False  # said bare or as a set's title at the utterance's head ("Eleven thirty, pulse ...",
    # "Twenty forty update, ..."): its readings' time only


def times(s: Sentence, time_rewrites: list[tuple[int, int]], now_hhmm: str) -> list[Said]:
    """Times in the sentence; `time_rewrites` are the spans of `text` the number step wrote under rule "time";
    a watch-face time ("ten past nine") is read against the clock `now_hhmm` (clock_words.py)."""
    found = []
    for match in _HHMM.finditer(s.text, s.start, s.end):
        if _NOT_TIME_BEFORE.search(s.lower, max(s.start, match.start() - 40), match.start()):
            continue
        by_asr = any(start <= match.start() and match.end() <= end for start, end in time_rewrites)
        cued = by_asr or _said_as_time(s, match.start(), match.end()) or match.group().startswith("0")  # no dose: 0905
        heads = _heads(s, match.start(), match.end())
        if cued or heads:
            found.append(Said(match.group(), None, match.start(), match.end(),
                              heads=not cued or heads and _titled(s, match.end())))
    for match in _COLON_TIME.finditer(s.text, s.start, s.end):
        found.append(Said(f"{int(match.group(1)):02d}{match.group(2)}", None, match.start(), match.end()))
    for number in iter_numbers(s.text, s.start, s.end):
        if s.text.startswith(":", number.end) or s.text[max(s.start, number.start - 1):number.start] == ":":
            continue  # the hour or the minutes of "9:15"
        ago = _AGO.match(s.lower, number.end, s.end)
        heads = _heads(s, number.start, number.end)
        if ago and number.value is not None:
            minutes = number.value * (60 if ago.group("unit").startswith("h") else 1)
            found.append(Said(None, -minutes, number.start, ago.end()))
        elif len(number.digits) == 4 and not _HHMM.fullmatch(s.text[number.start:number.end]) and \
                valid_hhmm(number.digits) and \
                not _NOT_TIME_BEFORE.search(s.lower, max(s.start, number.start - 40), number.start) and \
                ((cued := _said_as_time(s, number.start, number.end)) or heads):
            found.append(Said(number.digits, None, number.start, number.end,  # "at oh nine thirty"
                              heads=not cued or heads and _titled(s, number.end)))
        elif len(number.digits) == 3 and valid_hhmm("0" + number.digits) and (
                (cued := _cued_hour(s, number)) or heads and number.digits[0] != "1"):  # "One twenty-eight, radial"
            found.append(Said("0" + number.digits, None, number.start, number.end, heads=not cued))  # "at nine
            # forty-five", "oh three hundred"
    for match in _AN_AGO.finditer(s.lower, s.start, s.end):
        unit = match.group("unit")
        back = -15.0 if match.group("quarter") else -60.0 if unit == "hour" else -1.0 if unit == "minute" else -30.0
        found.append(Said(None, back, match.start(), match.end()))
    for hhmm, start, end in clock_words(s.lower, s.start, s.end, now_hhmm):
        if not any(t.start < end and start < t.end for t in found):
            found.append(Said(hhmm, None, start, end))
    return sorted(found, key=lambda t: t.start)


def _said_as_time(s: Sentence, start: int, end: int) -> bool:
    """After "at", "time"...; before "hours"; led by "oh" or "zero" ("oh nine fifty", "placed zero nine five two")
    or with "oh" inside ("ertapenem one gram, nineteen oh five"), which no quantity is (a roster number or last four
    is no time: `_NOT_TIME_BEFORE`)."""
    return bool(_TIME_BEFORE.search(s.lower, max(s.start, start - 12), start) or _TIME_AFTER.match(s.lower, end)
                or s.lower.startswith(("oh ", "zero "), start) or _OH_INSIDE.search(s.lower, start, end)
                or _TIME_WAS.search(s.lower, max(s.start, start - 50), start))


def _cued_hour(s: Sentence, number: Number) -> bool:
    """Three digits said as a time: "oh nine hundred", "at nine forty-five", ", nine oh five" closing what was given
    (never after a reading's word)."""
    return s.lower.startswith("oh ", number.start) or number.digits[0] in "23456789" and (
        _AT.search(s.lower, max(s.start, number.start - 4), number.start) is not None or
        _OH_INSIDE.search(s.lower, number.start, number.end) is not None and s.lower.endswith(", ", 0, number.start)) \
        and \
        not _READING_BEFORE.search(s.lower, max(s.start, number.start - 40), number.start)


def _heads(s: Sentence, start: int, end: int) -> bool:
    """Said bare at the very head of the utterance, a mark after it: "Eleven thirty, pulse one hundred"."""
    return start == 0 and _HEADING.match(s.lower, end) is not None


def _titled(s: Sentence, end: int) -> bool:
    """A time at the utterance's head (`_heads`) followed by the title of a set: "Twenty forty update for the
    surgeon, ...": the readings' time, not the time of what he has had."""
    return _TITLED.match(s.lower, end) is not None


def valid_hhmm(digits: str) -> bool:
    return int(digits[:2]) <= 23 and int(digits[2:]) <= 59


FUTURE_SLACK_MIN = 5  # a time said up to this far ahead of the kit's clock is the medic's watch, not a plan


def past(when: Said | None, now_hhmm: str) -> bool:
    """A time said that is already past when it is said ("at 0910" at 1000, "ten minutes ago")."""
    if when is None:
        return False
    if when.spoken is None:
        return (when.relative_min or 0) < 0
    ahead = minutes_ahead(when.spoken, now_hhmm)
    return ahead == 0 or ahead >= 12 * 60


def future(when: Said | None, now_hhmm: str) -> bool:
    """A clock time said that is still ahead when it is said, by more than a watch's drift from the kit's clock
    ("TXA second gram at 1100" at 1000: not given yet)."""
    return when is not None and when.spoken is not None and \
        FUTURE_SLACK_MIN < minutes_ahead(when.spoken, now_hhmm) < 12 * 60
