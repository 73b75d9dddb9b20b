"""What a clinical mention was said as, before any rule may make a field of it: ConText over the card's clauses.

The algorithm is Harkema et al.'s ConText (J Biomed Inform 2009): find the
trigger phrases of every category in the sentence (tcccd.plugins.card.
context_rules), drop those a pseudo-trigger overlaps and those inside a longer
one, and let each reach the mentions of its assertion clause in its
direction (or the whole sentence), up to a terminator; a trigger inside a
mention's own words does not reach it ("normal saline" holds "normal"). A
mention that no trigger reaches is done or observed (`done`); one that several
reach takes the category listed first in the rules' priority. A sentence asked
("?") is a question throughout.

A forward trigger also reaches a list that continues it after a comma ("no
TXA, ketamine or morphine"): the next clauses while they hold mentions and
nothing else. The categories a mention's kind is exempt from: an allergy
finding is not itself "said as an allergy"; an injury's hedge ("possible
fracture", "might be a pneumothorax") is read by its rule, as a suspected injury.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from tcccd.plugins.card.context_rules import ContextRules, Trigger
from tcccd.plugins.card.phrases import Word, words
from tcccd.plugins.card.sentences import Sentence

DONE = "done"
EXEMPT = {"allergies": {"allergy", "history"}, "injury": {"possible"}, "mechanism": {"possible"},
          "no_allergies": {"allergy", "history", "absent"},  # "None known.": the negation is what it says
          # a reading's value said as an estimate ("pulse maybe 130") is still a reading taken, and one that "came
          # down" to a value is a trend, not a device taken off
          **dict.fromkeys(("pulse", "bp", "rr", "spo2", "pain"), {"possible", "removed"})}
def asserted_as(what: Any) -> str:
    """The kind whose exemptions a mention's status is read with: no known allergies is said as a negation."""
    return "no_allergies" if what.kind == "allergies" and what.allergies == "NKA" else what.kind


_CLOSES_LIST = re.compile(r"\b(?:and|or|nor)\b")
_CLOSES_NEGATED_LIST = re.compile(r"\b(?:or|nor)\b")
_REFERS_BACK = re.compile(r"\b(?:he|he['’]s|his|him|she|she['’]s|her)\b")
_LAST_ITEM = re.compile(r"[\w'-]+(?:\s+[\w'-]+){0,2}[\s.!]*")
_LIST_WORDS = re.compile(r"(?:\s|,|\b(?:and|or|a|an|the|any|some|either|neither|also|more)\b)*")
# what comes to a thing after it was done, said in a clause of its own after it ("IV in, blew it")
_SAID_AFTER = ("removed", "failed", "withheld", "absent")
_ONLY_SLOTS = re.compile(r"(?:\s|[,.!]|\b(?:it|them|that|this|one|off|out|at|around|about|too|again|already|now|"
                         r"later|\d+)\b)*")  # "blew it", "converted at 1440": nothing else named
_PAUSE = re.compile(r"(?:\s|[,.]|\b(?:uh|um|er|erm|hold\s+on|hang\s+on|wait|okay|ok)\b)*")
_DENIED_ACT = ("yet", "already", "ever", "even", "actually", "really", "been", "have", "has", "had", "it", "he",
               "she", "we", "i", "they")
Span = tuple[int, int]


class Hit(NamedTuple):
    """A trigger said: its category, its words [start, end), and the stretch of the sentence it reaches."""

    category: str
    start: int
    end: int
    reach: Span
    may_be_done: bool


@dataclass(frozen=True)
class Assertion:
    status: str  # "done", or the category that decided
    by: tuple[Span, ...]  # the trigger words that decided it (for "done": the act words of its clause)
    may_be_done: bool = False  # every deciding word is a verb whose past tense sounds alike


class SentenceContext:
    """The triggers of one sentence and what each reaches; `heads` are the spans of the mentions said in it."""

    def __init__(self, rules: ContextRules, s: Sentence, heads: list[Span], said: list[Word] | None = None) -> None:
        self.rules, self.s, self.heads = rules, s, sorted(heads)
        self.words = said if said is not None else words(s.lower, s.start, s.end)
        self.hits = self._hits()
        acts = list(rules.done.find(s.lower, self.words))
        self.done_words = [(a, b) for a, b, _ in acts]
        self.past_words = frozenset((a, b) for a, b, past in acts if past)

    def _hits(self) -> list[Hit]:
        s, rules = self.s, self.rules
        pseudo = [(a, b) for a, b, _ in rules.pseudo.find(s.lower, self.words)]
        pseudo += [(m.start(), m.end()) for m, _ in rules.pseudo_patterns.finditer(s.lower, s.start, s.end)]
        pseudo += s.cues  # "at eighteen thirty, no, eighteen forty": the "no" corrects, it does not deny
        found = list(rules.index.find(s.lower, self.words))
        found += [(m.start(), m.end(), t) for m, t in rules.patterned.finditer(s.lower, s.start, s.end)
                  if m.end() > m.start()]
        found = [(a, b, t) for a, b, t in found if not any(c < b and a < d for c, d in pseudo)]
        kept = [(a, b, t) for a, b, t in found  # a phrase inside a longer one is part of it ("not going to give")
                if not any(c <= a and b <= d and d - c > b - a for c, d, _ in found)]
        hits = [Hit(t.category, a, b, self._reach(t, a, b), t.may_be_done) for a, b, t in kept if self._placed(t, a)]
        category = rules.marks.get(s.mark)
        if category is not None:
            hits.append(Hit(category, s.end, s.end, (self._asked_from(category, kept), s.end), False))
        category = rules.shouted.get(s.mark)
        if category is not None and not any(rules.done.find(s.lower, self.words)):
            hits.append(Hit(category, s.end, s.end, (s.start, s.end), False))  # "Chest seal!": a call for one
        return hits

    def _asked_from(self, category: str, found: list[tuple[int, int, Trigger]]) -> int:
        """Where a sentence ended by a question mark starts asking: at a later clause that opens with a question's
        words ("He's alert, should we give him the pill pack?": the first clause is reported); else at its start."""
        for a, _, trigger in found:
            clause = self.s.act_of(a)
            if trigger.category == category and trigger.position != "anywhere" and clause[0] > self.s.start:
                lead = self.rules.fillers.match(self.s.lower, clause[0], a)
                if (lead.end() if lead else clause[0]) == a:
                    return clause[0]
        return self.s.start

    def _placed(self, trigger: Trigger, at: int) -> bool:
        if trigger.position == "anywhere":
            return True
        begin = self.s.start if trigger.position == "sentence_start" else self.s.act_of(at)[0]
        lead = self.rules.fillers.match(self.s.lower, begin, at)
        return (lead.end() if lead else begin) == at

    def _reach(self, trigger: Trigger, start: int, end: int) -> Span:
        s = self.s
        if trigger.scope == "next":  # "pain three after the ketamine": the one mention it names, nothing further
            at = end + len(s.lower[end:s.end]) - len(s.lower[end:s.end].lstrip())
            return at, at + 1
        low, high = (s.start, s.end) if trigger.scope == "sentence" else s.act_of(start)
        if trigger.scope == "person" and not any(low <= h[0] < high for h in self.heads):
            high = self._referred_end(high)
        elif trigger.scope in ("clause", "person") and trigger.direction != "backward":
            named = any(end <= h[0] < high for h in self.heads)  # else a thing not in the lexicon: "the second gram"
            high = self._list_end(high, _CLOSES_LIST if named else _CLOSES_NEGATED_LIST)
        if trigger.category == "absent" and trigger.direction == "forward":
            high = self._acted_end(end, high)
        for stop in (self.rules.terminators, trigger.terminated_by):
            if stop is None:
                continue
            after = stop.search(s.lower, end, high)
            high = after.start() if after else high
            before = [m for m in stop.finditer(s.lower, low, start)]
            low = before[-1].end() if before else low
        if trigger.direction == "forward":
            return end, high
        if trigger.category in _SAID_AFTER and low == s.act_of(start)[0] and _ONLY_SLOTS.fullmatch(
                s.lower, end, high) and (self.rules.fillers.fullmatch(s.lower, low, start) or _ONLY_SLOTS.fullmatch(
                s.lower, low, start)):
            low = self._clause_before(low)  # "TQ left arm at 1305, converted at 1440 to a pressure dressing"
        if trigger.direction == "backward":
            return low, start
        return low, high

    def _clause_before(self, low: int) -> int:
        """The start of the assertion clause before the one starting at `low` (or `low` when it is the first), past
        clauses that only pause ("TXA, uh, hold on, not yet")."""
        before = [(a, b) for a, b in self.s.acts if b <= low]
        while len(before) > 1 and _PAUSE.fullmatch(self.s.lower, *before[-1]):
            before.pop()
        return before[-1][0] if before else low

    def _acted_end(self, end: int, high: int) -> int:
        """Where a denial said without punctuation stops: at a past act word taking an object further on ("no exit
        packed it with Combat Gauze"), not at the act denied ("never got the NPA in", "haven't yet given TXA")."""
        act = self.rules.acted.search(self.s.lower, end, high)
        between = self.s.lower[end:act.start()].split() if act else []
        return act.start() if act and between and between[-1] not in _DENIED_ACT else high

    def _list_end(self, end: int, closes: re.Pattern[str]) -> int:
        """Past the following clauses that only go on listing mentions and close the list with "and", "or" or "nor"
        ('no TXA, ketamine or morphine'); 'not urgent, routine' is no list. After a clause that names nothing the
        card knows, only "or"/"nor" close one ("didn't get the second gram, the ondansetron or any blood"; "couldn't
        get a vein, IO and TXA" went on)."""
        reach = end
        for a, b in (a for a in self.s.acts if a[0] >= end):
            cursor = a
            for head_start, head_end in (h for h in self.heads if a <= h[0] < b):
                gap = _LIST_WORDS.match(self.s.lower, cursor, head_start)
                if gap is None or gap.end() != head_start:
                    return end
                cursor = head_end
            rest = _LIST_WORDS.match(self.s.lower, cursor, b)
            if cursor == a or rest is None:
                return end
            if rest.end() != b:  # the closing item may be one the card does not know: "the ondansetron or any blood"
                last = _LAST_ITEM.fullmatch(self.s.lower, rest.end(), b)
                return b if last and closes.search(self.s.lower, cursor, rest.end()) else end
            reach = b
            if closes.search(self.s.lower, a, b):
                return reach
        return end

    def _referred_end(self, end: int) -> int:
        """Past the following clauses that speak of a person again ("he's", "his") or only go on naming wounds on
        them ("frag in his back"): about the other person a clause naming nothing of this casualty was about."""
        reach = end
        for a, b in (a for a in self.s.acts if a[0] >= end):
            if not _REFERS_BACK.search(self.s.lower, a, b):
                break
            reach = b
        return reach

    def claims(self, pos: int, head: Span | None = None) -> bool:
        """A trigger other than an act or a repeat reaches `pos` (a time: "reassess at 1040") and not the mention
        `head`: what is said there belongs to that, not to the mention ("TQ left leg, still on from 0950" is its).
        Kit and teaching talk claims no time: "last set in the truck at eleven twenty, pulse 96" times the pulse."""
        return any(h.reach[0] <= pos < h.reach[1] and not (head and h.reach[0] <= head[0] < h.reach[1])
                   and h.category not in self.rules.repeats and h.category != "generic" for h in self.hits)

    def denied(self, start: int, at: int) -> bool:
        """A trigger of a status kept as a note (not done, failed, removed, withheld) said in [start, at): the act
        that follows it is denied ("we didn't put it back on"), whatever its reach."""
        return any(start <= h.start < at and h.category in self.rules.notes for h in self.hits)

    def status(self, head: Span, kind: str) -> Assertion:
        """How the mention whose head words are `head` was said."""
        exempt = EXEMPT.get(kind, set())
        reaching = [h for h in self.hits if h.category not in exempt and h.reach[0] <= head[0] < h.reach[1]
                    and not (head[0] <= h.start and h.end <= head[1] and h.end > h.start)]  # "normal saline"
        if not reaching:
            clause = self.s.act_of(head[0])
            return Assertion(DONE, tuple(w for w in self.done_words if clause[0] <= w[0] < clause[1]))
        best = min(self.rules.priority[h.category] for h in reaching)
        deciding = [h for h in reaching if self.rules.priority[h.category] == best]
        return Assertion(deciding[0].category, tuple((h.start, h.end) for h in deciding),
                         all(h.may_be_done for h in deciding))
