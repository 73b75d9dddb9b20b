"""What a rule reports, the body regions it reads from a sentence, and the values it flags as out of range.

A Finding is one fact with the characters it came from; the extractor turns it
into an event (casualty, time, negation, flags, heard span). Regions are read as
said: a side ("left", "right", "both", "bilateral") and a body part; "both arms"
is two regions, each traced to the same words, and so is a paired part said in
the plural with no side ("the arms").

Out of range: a value no casualty's body or monitor gives in practice. A
misheard number ("pulse 700" for "pulse 70") must not pass as a reading; it must
not vanish either: the event is kept and shown unconfirmed. The bounds are wide
on purpose: an extreme but real reading (pulse 30, SpO2 60%) is recorded as
said; only what is implausible for a living casualty, or outside the scale (pain
11 of 10), is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tcccd.plugins.card.lexicon import BODY_PARTS, LIMB_OF_PART, PAIRED, SIDES, alternation
from tcccd.plugins.card.sentences import Sentence

_REGION = re.compile(r"(?:\b(?P<side>left\s+and\s+right|right\s+and\s+left|left|right|bilateral|both|each)\s+"
                     r"(?:side\s+of\s+(?:the\s+|his\s+|her\s+)?|(?<=both\s)(?:his|her|the)\s+)?)?"  # "both his legs"
                     r"(?P<part>" + alternation(BODY_PARTS) + ")")
_MEASURE = re.compile(r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
                      r"forty|fifty|hundred|few|several|couple)(?:\s+or\s+\w+)?[\s-]+$")
_MEASURE_PARTS = ("foot", "feet")  # "fell fifteen feet", "a six foot drop": a length, not a body part
_SMALL = re.compile(r"\bsmall\s+$")
_BACK_ON = re.compile(r"\s+(?:on|in|up|off|down|out|together|of)\b")  # "back on": again; "back of it": a side of a part
# another casualty named in speech with no punctuation ("... tq left arm casualty three burns to both hands"): what
# is said after it is not about the mention before it
NEXT_CASUALTY = re.compile(r"\b(?:next\s+)?(?:casualty|patient)\s+(?:number\s+)?(?:\d|one|two|three|four|five|six)\b")
_SPACES = re.compile(r"\s+")
TRAILING_SIDE = re.compile(r"\s*,?\s*(?:the\s+|on\s+the\s+)?(left|right)(?:\s+(?:one|side))?\s*(?=[,.;]|$)")
BOUNDS: dict[tuple[str, str], tuple[float, float]] = {
    ("pulse", "rate"): (20, 250), ("bp", "systolic"): (40, 250), ("bp", "diastolic"): (20, 150),
    ("rr", "rate"): (4, 60), ("spo2", "percent"): (50, 100), ("pain", "score"): (0, 10),
    ("burn_extent", "percent"): (1, 100), ("fluid", "volume"): (1, 5000),  # mL
}


@dataclass(frozen=True)
class Finding:
    """One fact a rule read: `what` is a kind model of tcccd.wire.card_events; [start, end) are the words, `head` the
    words that name it (what assertion triggers must reach; the whole span when not given)."""

    what: Any
    start: int
    end: int
    rule: str
    head: tuple[int, int] | None = None

    @property
    def named(self) -> tuple[int, int]:
        return self.head if self.head is not None else (self.start, self.end)


@dataclass(frozen=True)
class Region:
    side: str | None  # right, left or None; "both" is split into two regions
    part: str
    start: int
    end: int

    @property
    def name(self) -> str:
        return f"{self.side} {self.part}" if self.side else self.part

    @property
    def limb(self) -> str | None:
        """'left leg' for a left thigh: the DD 1380 limb a tourniquet on this part is recorded under."""
        limb = LIMB_OF_PART.get(self.part)
        return f"{self.side} {limb}" if limb and self.side else None


def regions(sentence: Sentence, start: int, end: int) -> list[Region]:
    """Body regions said between two positions, in order; 'both arms' gives the right and the left arm."""
    found: list[Region] = []
    for match in sentence.find(_REGION, start, end):
        if said(match, "part") in _MEASURE_PARTS and _MEASURE.search(sentence.lower, max(0, match.start() - 30),
                                                                      match.start()):
            continue
        if said(match, "part") == "arms" and _SMALL.search(sentence.lower, max(0, match.start() - 8), match.start()):
            continue  # "small arms": the weapon
        if said(match, "part") == "back" and _BACK_ON.match(sentence.lower, match.end()):
            continue  # "splint's back on": again, not his back
        part = BODY_PARTS[said(match, "part")]
        side = SIDES.get(match.group("side") or "", "both" if match.group("side") else None)  # "left and right"
        trailing = TRAILING_SIDE.match(sentence.lower, match.end(), end) if side is None else None
        if trailing:  # "the same shoulder, the right": the side said after the part
            side = SIDES[trailing.group(1)]
        if side is None and part in PAIRED and said(match, "part") != part and said(match, "part").endswith("s"):
            side = "both"  # "burns to the arms": both arms
        if side == "both":
            found += [Region("right", part, match.start(), match.end()), Region("left", part, match.start(),
                                                                                 match.end())]
        else:
            found.append(Region(side, part, match.start(), match.end()))
    return found


def side_in(sentence: Sentence, start: int, end: int) -> tuple[str, int, int] | None:
    """The first side word ('left', 'right', 'both', 'bilateral') between two positions, with its span."""
    match = re.compile(r"\b(left|right|both|bilateral)\b").search(sentence.lower, start, end)
    return (SIDES[match.group(1)], match.start(), match.end()) if match else None


def spanning(what: Any, rule: str, *spans: tuple[int, int]) -> Finding:
    """A finding covering every span it read, the first being the words that name it (then a region, a number...)."""
    return Finding(what, min(s for s, _ in spans), max(e for _, e in spans), rule, spans[0])


CUT_MARK = " [cut]"


def cut(value: str, limit: int) -> str:
    """A value said at more length than its field holds: kept, cut to the limit and marked, never refused."""
    return value if len(value) <= limit else value[:limit - len(CUT_MARK)].rstrip() + CUT_MARK


def said(match: re.Match, group: int | str = 0) -> str:
    """A lexicon key for what a pattern matched: the words in lower case, single-spaced."""
    return _SPACES.sub(" ", match.group(group))


def distinct(s: Sentence, rx: re.Pattern[str], table: dict[str, Any]) -> Iterator[tuple[Any, re.Match]]:
    """Each value a table gives for the forms said in a sentence, once, at its first mention."""
    seen = set()
    for match in s.find(rx):
        value = table[said(match)]
        if value not in seen:
            seen.add(value)
            yield value, match


def out_of_range(what: Any) -> bool:
    for (kind, field), (low, high) in BOUNDS.items():
        value = getattr(what, field, None) if what.kind == kind else None
        if value is not None and getattr(what, "unit", None) == "L":
            value *= 1000  # the fluid bounds are in mL: "half a liter" is 500
        if value is not None and not low <= value <= high:
            return True
    if what.kind == "bp" and what.systolic is not None and what.diastolic is not None:
        return what.diastolic >= what.systolic
    return False
