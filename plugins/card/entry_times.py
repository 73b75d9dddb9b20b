"""Which time an entry takes, from the times said in its sentence (tcccd.plugins.card.context.times).

A positive entry takes the time said in its own slot clause: the first one
after its words ("TQ left arm at 0905 and right leg at 0910"), else the nearest
before them that no other mention (or casualty switch) said before it owns
("ketamine 25 IV at 1302 zofran 4 IV": the time is the ketamine's); never one a
trigger ties to something else ("reassess at 1040").
A time said at the head of the sentence, before anything it could belong to
("At 0945, BP ..., pulse ..."; after the casualty it is about: "Casualty one,
at 0931, ...") covers the sentence. Readings said together are one set, so one
time said with any of them is theirs ("Pulse 100 at 0921, BP 110/70"), unless
each has its own. A time said in words the recogniser doubted cannot be read:
the entry (every entry of the sentence, for a time at its head) is then shown
unconfirmed rather than at the clock's minute. A first sentence that says only
a time and what follows ("PFC update, 1300.", "2000 reassessment.") heads the
readings of the utterance as a time at the head of its first sentence would.
"""

from __future__ import annotations

import re

from tcccd.plugins.card.assertion import SentenceContext
from tcccd.plugins.card.clock_words import minutes_ahead, shifted
from tcccd.plugins.card.context import Said
from tcccd.plugins.card.finding import Finding
from tcccd.plugins.card.sentences import Sentence
from tcccd.wire.card_events import VITAL_KINDS, EventTime
from tcccd.wire.card_stage import ClockAhead

_AT = re.compile(r"\b(?:at|@)\s+$")  # a time follows
_OPENS = re.compile(r"(?:(\d)\s+|^|\s)(?:at|@)\s+$")
_LEADS = re.compile(r"[\s,:]*(?:(?:the|his|her|a|an|he|had|got|gave|was|is)\s+)*")
_HEADING = re.compile(r"[\s,:;-]*(?:(?:pfc|update|reassessment|reassess|flowsheet|flow\s+sheet|obs|observations|vitals|"
                      r"checks?|rechecks?|rounds|status|report|sitrep|night|morning|evening|shift|hourly|handover|at|time|now|"
                      r"it['’]?s|hours|hrs|the|hour\s+\w+)[\s,:;-]*)*")


def lead_time(s: Sentence, said: list[Said], findings: list[Finding], context: SentenceContext,
              switched: list[int]) -> Said | None:
    """The time said at the head of the sentence (only casualty switches before it), or None."""
    if not said or not findings or said[0].start > findings[0].named[0] or context.claims(said[0].start):
        return None
    acts = s.acts or [(s.start, s.end)]
    before = [a for a in acts if a[1] <= said[0].start]
    heads = [a for a in acts if a[0] <= said[0].start < a[1]]
    return said[0] if heads and all(any(a[0] <= at < a[1] for at in switched) for a in before) else None


def heading_time(s: Sentence, said: list[Said]) -> Said | None:
    """The time of a sentence that says nothing but a time and that readings follow ("PFC update, 1300."), or None."""
    if len(said) != 1:
        return None
    at = said[0]
    return at if _HEADING.fullmatch(s.lower, s.start, at.start) and _HEADING.fullmatch(s.lower, at.end, s.end) else None


def set_time(s: Sentence, said: list[Said], findings: list[Finding], context: SentenceContext) -> Said | None:
    """The one time said with any of the sentence's readings, when only one was."""
    timed = {own_time(s, f, said, context) for f in findings if f.what.kind in VITAL_KINDS} - {None}
    return timed.pop() if len(timed) == 1 else None


def own_time(s: Sentence, finding: Finding, said: list[Said], context: SentenceContext) -> Said | None:
    """The time said in the mention's slot clause, or None."""
    head = finding.named
    clause = s.clause_of(head[0])
    own = [t for t in said if clause[0] <= t.start < clause[1] and not context.claims(t.start, head)
           and (not t.heads or finding.what.kind in VITAL_KINDS)]
    others = [h for h in context.heads if h != head and clause[0] <= h[0] < clause[1]]
    after = [t for t in own if t.start >= head[0] and not any(_next_to(s, t, h) for h in others)]
    before = [t for t in own if t.start < head[0] and (_next_to(s, t, head) or not any(
        h[0] < t.start for h in others))]
    return after[0] if after else max(before, key=lambda t: t.start) if before else None


def _next_to(s: Sentence, time: Said, head: tuple[int, int]) -> bool:
    """The time opens what follows it ("at 0950 pulse 124 at 1000 pulse 110": "at", after a reading's value or at
    the clause's start, and right before the mention): it is that mention's."""
    clause_start = s.clause_of(time.start)[0]
    opens = _OPENS.search(s.lower, max(clause_start, time.start - 16), time.start)
    return time.end <= head[0] and opens is not None and (opens.start() == clause_start or opens.group(1) is not None) \
        and _LEADS.fullmatch(s.lower, time.end, head[0]) is not None


def doubted_time(s: Sentence, uncertain: list[tuple[int, int]], start: int, end: int) -> bool:
    """A doubted word right after "at" between two positions (an entry's clause, a sentence's head): a time said that
    could not be read."""
    return any(start <= a < end and _AT.search(s.lower, max(s.start, a - 8), a) for a, _ in uncertain)


def clock_behind(furthest: ClockAhead | None, said_hhmm: str, clock_hhmm: str) -> ClockAhead:
    """'Tourniquet applied at 0912' said when the kit's clock reads 2157: the clock or its zone may be wrong; the
    time said furthest ahead of the clock in the transcript is the one reported."""
    ahead = minutes_ahead(said_hhmm, clock_hhmm)
    if furthest is None or ahead > furthest.ahead_min:
        return ClockAhead(said_hhmm=said_hhmm, clock_hhmm=clock_hhmm, ahead_min=ahead)
    return furthest


def event_time(utterance_ts: float, logged_hhmm: str, when: Said | None) -> EventTime:
    """An event's time: when it was logged, and the clock time said for it (or worked out from minutes said ago)."""
    at = None if when is None else when.spoken or shifted(logged_hhmm, when.relative_min or 0.0)
    return EventTime(logged_ts=utterance_ts, logged_hhmm=logged_hhmm, spoken=when.spoken if when else None,
                     relative_min=when.relative_min if when else None, at_hhmm=at)
