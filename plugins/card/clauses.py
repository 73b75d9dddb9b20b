"""Where a sentence's clauses end: for assertion (what a trigger word reaches) and for slots (what a mention owns).

Assertion clauses end at commas, semicolons, colons, dashes, "but", "then", "so",
"though", "while" and at a correction cue: a trigger word ("not", "going to",
"missed") reaches the mentions of its own clause (tcccd.plugins.card.assertion).

Slot clauses hold one mention and its slots (a dose, unit, route, limb, side,
time, site). They are the assertion clauses, cut again at "and" when what
follows it names something the card records ("TXA 1 g IV and ketamine 50 mg
IM": two), and then joined where a clause names nothing: a clause of slots alone
belongs to the mention before it ("Tourniquet applied, left leg, 0912") or, at
the start of the sentence, to the one after it ("Right upper arm, TQ"). A slot
never crosses into another mention's clause, nor across a correction cue.

A run of words with no punctuation at all (a long recording Whisper did not
punctuate) is cut before words that name something, every 60 words or so, so
that each piece is read on its own and reading stays linear in its length.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from tcccd.plugins.card import lexicon as lx

MAX_WORDS = 60
_STATUS_WORDS = 4  # "TXA: not given yet": a status said after a colon or dash, no longer
_HEAD_FORMS = [*lx.TOURNIQUET_WORDS, *lx.HEMOSTATIC, *lx.PRESSURE, *lx.AIRWAY, *lx.BREATHING, *lx.FLUIDS,
               *lx.MEDICATIONS, *lx.PULSE_WORDS, *lx.BP_WORDS, *lx.RR_WORDS, *lx.SPO2_WORDS, *lx.AVPU,
               *lx.INJURIES, *lx.MECHANISMS, *lx.HYPOTHERMIA, *lx.PILL_PACK, *lx.EVAC_CATEGORIES, *lx.MOBILITY,
               "pain", "systolic", "splint", "splinted", "eye shield", "eye shields", "last four", "last 4",
               "battle roster", "allergic", "allergy", "allergies", "nka", "nkda", "responder", "casualty",
               "patient", "evac", "precedence", "note", "saline lock", "ez-io", "fast1", "intraosseous",
               "intravenous", "iv's", "io's", "iv line", "burns", "tbsa", "dressing", "dressings", "bandage",
               # access named by where it went ("IO sternum"): a bare "IV" is as often a route ("twenty IV")
               *(f"{device} {where}" for device in ("iv", "io")
                 for where in ("access", "is", "in", "left", "right", "sternal", "sternum", "tibia", "tibial",
                               "humerus", "humeral", "placed", "started", "established")),
               # a tourniquet named by its device where it is put ("CAT left leg at 0931, Combat Gauze right arm"),
               # not the device said after its tourniquet ("TQ placed, left arm, CAT, 0950")
               *(f"{device} {where}" for device in lx.TOURNIQUET_DEVICES
                 for where in ("left", "right", "both", "bilateral", "on", "to", "high", "applied", "placed"))]
HEAD = re.compile(lx.alternation(f for f in _HEAD_FORMS if f not in ("liter", "rr", "hr", "wound", "injury",
                                                                     "injuries")))  # "above the wound": a place
_ACT_END = re.compile(r"[,;:]|\s+-\s+|\s+(?:but|then|so|though|although|however|while)\b")
_AND = re.compile(r"\s+and\s+(?:then\s+)?")
_SKIP = re.compile(r"(?:(?:a|an|the|his|her|another|also|and|uh|um|second|third|new|fresh|other|\d+(?:\.\d+)?|one|"
                   r"two|three|four|five|ten|twenty|fifty|"
                   r"hundred|g|mg|mcg|ml|units?|grams?|milligrams?|micrograms?|liters?|of)\s+)*")
_WORD = re.compile(r"\S+")
_ANOTHER = re.compile(r"\b(?:another|one\s+more|a\s+second\s+one|a\s+new\s+one|needs?\s+one|the\s+other\s+one|"
                      r"(?:\d+|five|ten|fifteen|twenty|twenty-five|fifty|hundred)\s+more)\b")

Span = tuple[int, int]


def long_runs(lower: str, start: int, end: int) -> list[Span]:
    """A stretch of text cut into pieces of about MAX_WORDS words, each cut made before a word that names something
    (or at the limit when none does)."""
    if end - start <= 2 * MAX_WORDS:  # too short to hold more than MAX_WORDS words: no need to count them
        return [(start, end)]
    words = [m.start() for m in _WORD.finditer(lower, start, end)]
    if len(words) <= MAX_WORDS:
        return [(start, end)]
    heads = {m.start() for m in HEAD.finditer(lower, start, end)}
    pieces, piece_start, first = [], start, 0
    while len(words) - first > MAX_WORDS:
        limit = first + MAX_WORDS
        cut = next((k for k in range(limit, first + MAX_WORDS // 3, -1) if words[k] in heads), limit)
        pieces.append((piece_start, words[cut]))
        piece_start, first = words[cut], cut
    pieces.append((piece_start, end))
    return pieces


def act_clauses(lower: str, start: int, end: int, cues: list[Span]) -> list[Span]:
    """Assertion clauses of a sentence: cut at punctuation, a few conjunctions, and around correction cues; not at a
    colon or dash that only gives the status of what is before it ("TXA: not given", "TXA - no")."""
    cuts = sorted([(m.start(), m.end()) for m in _ACT_END.finditer(lower, start, end)] + cues)
    kept = []
    for i, (a, b) in enumerate(cuts):
        tail_end = cuts[i + 1][0] if i + 1 < len(cuts) else end
        tail = lower[b:tail_end]
        if lower[a:b].strip() in (":", "-") and len(tail.split()) <= _STATUS_WORDS and not HEAD.search(tail):
            continue
        kept.append((a, b))
    return _cut(lower, start, end, kept)


def slot_clauses(lower: str, acts: list[Span], cues: list[Span]) -> list[Span]:
    """Slot clauses: the assertion clauses cut at 'and' + a mention, then the clauses that name nothing joined to
    a neighbour in the same stretch between correction cues."""
    pieces: list[Span] = []
    for start, end in acts:
        cuts = []
        for m in _AND.finditer(lower, start, end):
            skipped = _SKIP.match(lower, m.end(), end)
            at = skipped.end() if skipped else m.end()
            if HEAD.match(lower, at, end):
                cuts.append((m.start(), m.end()))
        pieces += _cut(lower, start, end, cuts)
    named = [HEAD.search(lower, a, b) is not None for a, b in pieces]
    other = [_ANOTHER.search(lower, a, b) is not None for a, b in pieces]
    steps = [i > 0 and _NEXT_STEP.search(lower, pieces[i - 1][1], a) is not None for i, (a, _) in enumerate(pieces)]
    groups: list[list[Span]] = [[]]
    for i, piece in enumerate(pieces):  # a cue starts a new stretch: nothing is joined across it
        if i and any(pieces[i - 1][1] <= c[0] and c[1] <= piece[0] for c in cues):
            groups.append([])
        groups[-1].append(piece)
    out: list[Span] = []
    k = 0
    for group in groups:
        flags, others, opens = named[k:k + len(group)], other[k:k + len(group)], steps[k:k + len(group)]
        k += len(group)
        out += _joined(group, flags, others, opens)
    return out


def _joined(pieces: list[Span], named: list[bool], other: list[bool], opens: list[bool]) -> list[Span]:
    """`opens`: the piece follows "then", "after that"...: a step after the mention before it, so its slots are the
    next mention's ("I gave the ketamine, fifty IM, then at the CCP, zero nine fifty-five, the TXA went in")."""
    if not any(named):
        return [(pieces[0][0], pieces[-1][1])] if pieces else []
    out: list[Span] = []
    pending_start: int | None = None  # clauses before the first mention join the first clause that names one
    for piece, has_head, its_own, step in zip(pieces, named, other, opens, strict=True):
        if its_own and not has_head:  # "Got a TQ on, need another for the right arm": the arm is the other's
            out.append(piece)
        elif has_head:
            out.append((pending_start if pending_start is not None else piece[0], piece[1]))
            pending_start = None
        elif out and pending_start is None and not step:
            out[-1] = (out[-1][0], piece[1])
        elif pending_start is None:
            pending_start = piece[0]
    if pending_start is not None and out:  # a step that named nothing after it: its slots stay with the last one
        out[-1] = (out[-1][0], pieces[-1][1])
    return out


_NEXT_STEP = re.compile(r"\b(?:then|after\s+that|afterwards|later)\b")


def trimmed(text: str, start: int, end: int) -> Span:
    """[start, end) without the spaces at either end."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cut(lower: str, start: int, end: int, cuts: list[Span]) -> list[Span]:
    out, cursor = [], start
    for a, b in cuts:
        if a < cursor:
            continue
        if a > cursor:
            out.append((cursor, a))
        cursor = b
    if cursor < end:
        out.append((cursor, end))
    return [trimmed(lower, *p) for p in out if lower[p[0]:p[1]].strip()] or [(start, end)]


def clause_at(clauses: list[Span], pos: int) -> Span:
    """The clause holding a position (the nearest one before it when it falls between clauses)."""
    if len(clauses) == 1:  # most sentences are one clause
        return clauses[0]
    starts = [c[0] for c in clauses]
    i = max(0, bisect_right(starts, pos) - 1)
    return clauses[i]
