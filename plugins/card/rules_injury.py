"""Section B: mechanism of injury, injuries by body region, extent of burns.

An injury is a kind of wound said with the body regions in the same clause
("shrapnel wounds to the right arm and face": two injuries); a region said
before any kind belongs to the first kind ("bilateral lower leg amputations").
A kind said with no region takes the last region said before it when "there" or
"in it" follows it ("SAM splint on the right forearm, possible fracture there"),
else it is kept with the region blank, except the bare words
"wound" and "injury", and words that are a wound only with a body part
("broken", "frag", "shot in the"), which say nothing on their own. A wound named
as the place a treatment went ("packed the wound", "chest seal over the entry
wound") is the treatment's site, not an injury reported; and a body word inside
a device's name ("chest seal", "eye shield") is no region. "possible"/"suspected" before a kind
makes it "suspected ...". The mechanism is only what was named: a wound's kind
never implies a mechanism, except a gunshot wound, which is both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from tcccd.plugins.card.clauses import HEAD
from tcccd.plugins.card.finding import (
    NEXT_CASUALTY,
    TRAILING_SIDE,
    Finding,
    Region,
    distinct,
    regions,
    said,
    spanning,
)
from tcccd.plugins.card.lexicon import (
    BREATHING,
    DEVICES_NAMED_FOR_A_PART,
    FALL_FROM,
    FALL_WORDS,
    FLUIDS,
    GENERIC_INJURIES,
    HEDGES,
    HEMOSTATIC,
    HYPOTHERMIA,
    INJURIES,
    MECHANISMS,
    MEDICATIONS,
    NEEDS_REGION,
    PRESSURE,
    SIDES,
    SITE_OF_CARE,
    TOURNIQUET_WORDS,
    alternation,
    pattern,
)
from tcccd.plugins.card.sentences import Sentence
from tcccd.wire.card_events import BurnExtent, Injury, Mechanism

_MECHANISM = pattern(MECHANISMS)
_DEVICE_WORDS = pattern(DEVICES_NAMED_FOR_A_PART)
_TREATMENT = pattern([*TOURNIQUET_WORDS, *HEMOSTATIC, *PRESSURE, *BREATHING, *FLUIDS, *MEDICATIONS, *HYPOTHERMIA,
                      "packed", "dressing", "bandage", "splint", "eye shield", "rigid shield", "dressed", "bandaged",
                      "covered", "sealed", "irrigated", "cleaned"])
_INJURY = pattern(INJURIES)
# care or another casualty said after a wound in speech with no punctuation: the regions after it are not the wound's
_CARE_OR_SWITCH = re.compile(_TREATMENT.pattern + "|" + NEXT_CASUALTY.pattern)
# care said in a clause of its own, beside the wound's: its region is where the care went ("Both eyes shielded,
# frag to the face"; "two CATs on the right thigh, traumatic amputation right leg")
_CARE_SITE = re.compile(_TREATMENT.pattern + r"|\b(?:cats?|shield(?:ed|s)?|splinted|splints?)\b")
_EXPLOSIVES = ("IED", "grenade", "RPG", "mortar", "artillery", "landmine")
# "ringing ears", "his ears are ringing": a symptom of the blast, not where a wound is
_RINGING = re.compile(r"\bringing\b")
_LANDMARK = re.compile(r"\b(?:above|below|at|through|proximal\s+to|distal\s+to|just\s+(?:above|below))\s+"
                       r"(?:the\s+|his\s+|her\s+)?(?:(?:left|right)\s+)?$")
# "a lac on his chin from the fall": a wound put down to a fall said before
_FALL = re.compile(r"\b(?:from|in|during|after)\s+(?:the|his|her|that)\s+fall\b|\bfell\s+(?:on\s+(?:his|her)\s+"
                   r"(?:(?:left|right)\s+)?outstretched|(?:while\s+)?playing)\b|" + alternation(FALL_WORDS) +
                   r"(?:\s+(?:about|around|roughly|like|over|maybe|down|off|from|out|of|a|an|"
                   r"the|his|her|into|onto|approximately|\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
                   r"fifteen|twenty|thirty|forty|fifty|\w+teen|or|to|flight|flights|story|stories|of\s+a|back|top|"
                   r"side|edge)){0,6}?\s+" + alternation(FALL_FROM))
# "burn dressings on both hands": care named for a kind of wound, no wound found
_CARE_NAMED_FOR = re.compile(r"\s+(?:dressings?|gel|sheets?|kits?|cream|ointment|bandages?)\b")
# "fell on his outstretched hand, left wrist sprain": how he landed, not where he is hurt
_LANDED_ON = re.compile(r"\b(?:fell|landed|landing|falling)\s+(?:on|onto)\s+(?:his|her|the|an?)\s+"
                        r"(?:(?:left|right)\s+)?outstretched\s+(?:(?:left|right)\s+)?$")
# "X-ray in the morning to rule out a fracture": what a test is for, no finding
_TO_RULE_OUT = re.compile(r"\bto\s+rule\s+out\s+(?:an?\s+)?(?:[\w']+\s+){0,3}$")
_NONE_OTHER = re.compile(r"\bno\s+(?:other|further|more|new)\s+$")  # "foot's pink, no other injuries": none to place
_PART_OF = {"toe": "foot", "finger": "hand", "thumb": "hand", "index finger": "hand", "middle finger": "hand",
            "ring finger": "hand", "little finger": "hand"}
_REFERRED = re.compile(r"\b(?:over|covering|into|onto)\s+(?:the|that|this)\s+$")
_ANOTHER = re.compile(r"(?:,|\band)\s+(?:and\s+)?(?:an?|one)\s")
_HEDGE = re.compile(r"\b(" + "|".join(HEDGES).replace(" ", r"\s+") + r")\s+(?:[\w']+\s+){0,4}$")
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:%|percent)")
_BURN_WORD = re.compile(r"\b(burns?|burned|tbsa|body surface area)\b")
_PERCENT_ALONE = re.compile(r"\s*(?:(?:that['’]s|it['’]s|that\s+is|it\s+is|looks\s+like|i['’]d\s+(?:say|estimate|"
                            r"guess)|maybe|about|approximately|roughly|around|estimated|an\s+estimated|call\s+it)\s+)*"
                            r"\d+(?:\.\d+)?\s*(?:%|percent)"
                            r"(?:\s*(?:tbsa|total body surface area|body surface area|total))?\s*$")
_MILDER = re.compile(r"\b(?:maybe|or|might\s+be|could\s+be)\s+just\s+$")  # "maybe broken, maybe just sprained"
# "SAM splint on the right forearm, possible fracture there", "a piece of frag in it"
_SWITCH = re.compile(r"\s*(?:casualty|patient)\s+(?:number\s+)?\w+\b")
_THERE = re.compile(r"\s+(?:(?:right\s+|in\s+)?there|in\s+it)\b")


def mechanisms(s: Sentence) -> Iterator[Finding]:
    """A mechanism named; not one shouted as a warning ("Grenade!")."""
    if s.mark == "!":
        return
    found = list(distinct(s, _MECHANISM, MECHANISMS))
    if any(value in _EXPLOSIVES for value, _ in found):  # "grenade blast": the blast is the grenade's
        found = [(value, match) for value, match in found if value != "blast"]
    for value, match in found:
        yield Finding(Mechanism(mechanism=value), match.start(), match.end(), "mechanism")
    fall = next(s.find(_FALL), None)
    if fall is not None and "fall" not in (value for value, _ in found):
        yield Finding(Mechanism(mechanism="fall"), fall.start(), fall.end(), "mechanism.fall")


_MARK_AFTER = re.compile(r"\s*[,:]")
_MECHANISM_SAID = re.compile(r"\b(?:mechanism(?:\s+of\s+injury)?|moi)(?:\s+(?:is|was))?[\s:,]*$")


def injuries(s: Sentence) -> Iterator[Finding]:
    for clause_start, clause_end in s.clauses:
        kinds = [m for m in s.find(_INJURY, clause_start, clause_end)]
        if not kinds:
            continue
        devices = [(m.start(), m.end()) for m in s.find(_DEVICE_WORDS, clause_start, clause_end)]
        treated = next(s.find(_TREATMENT, clause_start, clause_end), None) is not None
        kinds = [k for i, k in enumerate(kinds) if not (treated and INJURIES[said(k)] in SITE_OF_CARE)
                 and not _heading(s, k, kinds[i + 1:]) and not _MILDER.search(s.lower, clause_start, k.start())
                 and not _CARE_NAMED_FOR.match(s.lower, k.end())
                 and not _TO_RULE_OUT.search(s.lower, max(clause_start, k.start() - 40), k.start())
                 and not (INJURIES[said(k)] in GENERIC_INJURIES and _NONE_OTHER.search(
                     s.lower, max(clause_start, k.start() - 16), k.start()))]
        places = [r for r in regions(s, clause_start, clause_end) if not any(a <= r.start < b for a, b in devices)]
        places = [r for r in places if not _LANDED_ON.search(s.lower, max(clause_start, r.start - 40), r.start)]
        places = [r for r in places if not _care_site(s, r, kinds) and not _RINGING.search(
            s.lower, max(clause_start, r.start - 20), min(clause_end, r.end + 14))]
        parts = {r.part for r in places}  # "frostbite left hand, fingers white and hard": the hand's fingers
        places = [r for r in places if _PART_OF.get(r.part) not in parts]
        sided = {r.part for r in places if r.side}  # "right thigh, entry and exit both on the thigh": one thigh
        places = [r for r in places if r.side or r.part not in sided]
        landmarks = [r for r in places if _LANDMARK.search(s.lower, max(clause_start, r.start - 30), r.start)]
        if len(landmarks) < len(places):  # "right leg below the knee": the knee says where on the leg
            places = [r for r in places if r not in landmarks]
        for i, kind in enumerate(kinds):
            until = kinds[i + 1].start() if i + 1 < len(kinds) else clause_end
            other = _ANOTHER.search(s.lower, kind.end(), until)  # "... ankle, and a scalp lac": another injury's
            until = other.start() if other else until
            care = _CARE_OR_SWITCH.search(s.lower, kind.end(), until)  # "gsw right thigh tq right leg": the TQ's leg
            until = care.start() if care else until
            since = kind.start() if i else clause_start
            own = [_sided_after(s, r, kind, clause_end) for r in places if since <= r.start < until]
            if any(not s.lower[r.end:kind.start()].strip() for r in own if r.end <= kind.start()):
                own = [r for r in own if r.start >= kind.start() or not s.lower[r.end:kind.start()].strip()]  # "hit
                # his head on the window, he's got a scalp lac": the place named with the wound is its own
            name, said_from = _kind_name(s, kind, kinds[i - 1].end() if i else None)
            if not own and (_THERE.match(s.lower, kind.end(), clause_end) or _place_alone_before(s, said_from)):
                own = regions(s, s.start, said_from)[-1:]  # the place said before it
            for region in own:
                yield spanning(Injury(region=region.name, injury=name), "injury.region",
                               (said_from, kind.end()), (region.start, region.end))
            if not own and _MECHANISM_SAID.search(s.lower, max(clause_start, kind.start() - 30), kind.start()):
                continue  # "Mechanism GSW." (a report's M): how he was hurt, not a wound
            if not own and _REFERRED.search(s.lower, max(clause_start, said_from - 30), said_from):
                continue  # "a seal over the exit wound": the place care went, a wound already known
            if not own and INJURIES[said(kind)] not in GENERIC_INJURIES and said(kind) not in NEEDS_REGION:
                yield Finding(Injury(region=None, injury=name), said_from, kind.end(), "injury")



def _place_alone_before(s: Sentence, at: int) -> bool:
    """The slot clause right before the wound's names a place and nothing else, whoever it is said of ("Casualty
    two, Kessler, right ankle, possible fracture"): that place is the wound's."""
    before = [c for c in s.clauses if c[1] <= at]
    if not before or s.lower[before[-1][1]:at].strip(" ,"):
        return False
    start, end = before[-1]
    switch = _SWITCH.match(s.lower, start, end)
    return bool(regions(s, start, end)) and not HEAD.search(s.lower, switch.end() if switch else start, end)


def _heading(s: Sentence, kind: re.Match, later: list[re.Match]) -> bool:
    """"Injuries, left leg amputation": a generic word opening the sentence with a mark after it heads a list whose
    own kinds own its regions ("the leg wound, this guy's only got a lac" is no heading)."""
    return INJURIES[said(kind)] in GENERIC_INJURIES and not s.lower[s.start:kind.start()].strip() \
        and _MARK_AFTER.match(s.lower, kind.end()) is not None \
        and any(INJURIES[said(k)] not in GENERIC_INJURIES for k in later)


def _care_site(s: Sentence, region: Region, kinds: list[re.Match]) -> bool:
    """The region is said in an assertion clause of its own that names care and no wound (see _CARE_SITE)."""
    act = s.act_of(region.start)
    if any(act[0] <= k.start() < act[1] for k in kinds):
        return False
    return next(s.find(_CARE_SITE, act[0], act[1]), None) is not None


def _sided_after(s: Sentence, region: Region, kind: re.Match, clause_end: int) -> Region:
    """A region named inside the injury's words, or right before them, takes the side said right after them
    ("sucking chest wound, left side", "a scalp lac, left side")."""
    named_with = kind.start() <= region.start < kind.end() or (
        region.end <= kind.start() and not s.lower[region.end:kind.start()].strip())
    if region.side is not None or not named_with:
        return region
    trailing = TRAILING_SIDE.match(s.lower, kind.end(), clause_end)
    return replace(region, side=SIDES[trailing.group(1)]) if trailing else region


def _kind_name(s: Sentence, kind: re.Match, after: int | None) -> tuple[str, int]:
    """The injury as the card writes it ('suspected fracture' for 'possible broken'; a hedge said before an earlier
    kind, `after` it ends, is that one's), and where its words start."""
    name = INJURIES[said(kind)]
    hedge = _HEDGE.search(s.lower, max(s.clause_of(kind.start())[0], kind.start() - 40, after or 0), kind.start())
    return (f"{HEDGES[said(hedge, 1)]} {name}", hedge.start()) if hedge else (name, kind.start())


def burn_extent(s: Sentence) -> Iterator[Finding]:
    """A percentage said with a burn word in its clause ('30% TBSA'), or alone in a clause of a sentence about
    burns ('burns to the chest and both arms, about 30%'); never a saturation said in the same sentence."""
    if not _BURN_WORD.search(s.lower, s.start, s.end):
        return
    for clause_start, clause_end in [*s.clauses, *s.acts]:  # and each comma's piece: "..., fuel fire, call it 15%"
        clause = s.lower[clause_start:clause_end]
        if not (_BURN_WORD.search(clause) or _PERCENT_ALONE.match(clause)):
            continue
        for match in _PERCENT.finditer(s.lower, clause_start, clause_end):
            yield Finding(BurnExtent(percent=float(match.group(1))), match.start(), match.end(), "burn_extent")
            return
