"""One final transcript in, the card events it holds out: the rules run sentence by sentence, in the order said.

For each sentence: the casualty switches and every rule's mentions, sorted by position (a switch applies to what
follows it). Each mention then gets its assertion (tcccd.plugins.card.assertion): only one said as done or observed,
for this casualty, becomes a positive event; one said as absent, failed, removed or withheld a note in the medic's
words (negated); any other (a question, a plan, a condition, an allergy, someone else's...) nothing. Where the
status hangs on a word the recogniser doubted ("Give 1 g TXA": it may have been "Gave"), the entry is unconfirmed.

A positive event takes its time as tcccd.plugins.card.entry_times says; a time at the head of the utterance is
also the column of the readings in the sentences after it, until another time or a casualty switch (a bare one,
"Eleven thirty, pulse ...", theirs alone). Flags: `uncertain` when a word it came from was doubted (its casualty
number too, or the time said in its clause, which then could not be read), or its dose is a range; `out_of_range`
for a value no body gives; `correction` after a correction cue (tcccd.plugins.card.corrections). A mention said
again at a handover (a `repeats` status) is done, with that status, unless its clause says it is one more. Event ids
are the transcript's key and the event's index: replaying the same transcript gives the same ids.
"""

from __future__ import annotations

import re
from typing import Any

from tcccd.plugins.card import dialogue, entry_times
from tcccd.plugins.card.assertion import DONE, SentenceContext, asserted_as
from tcccd.plugins.card.clauses import trimmed
from tcccd.plugins.card.clock_words import local_hhmm
from tcccd.plugins.card.context import MAX_CASUALTY, Said, Switch, future, past, switches, times
from tcccd.plugins.card.context_rules import ContextRules
from tcccd.plugins.card.corrections import RETRACTED, restated, slot_clause, takes_back_the_last, time_restated
from tcccd.plugins.card.entry_times import clock_behind, doubted_time, heading_time, lead_time, own_time, set_time
from tcccd.plugins.card.finding import Finding, out_of_range
from tcccd.plugins.card.phrases import words
from tcccd.plugins.card.rule_table import findings as rule_findings
from tcccd.plugins.card.rules_hemorrhage import beside_the_last, tourniquet_again
from tcccd.plugins.card.sentences import Sentence, split
from tcccd.plugins.card.trail import Trail
from tcccd.wire.card_events import VITAL_KINDS, CasualtySwitch, Event, EventTime, TextSpan, TranscriptRef
from tcccd.wire.card_stage import MAX_OTHERS, CardEvents, CardExtract, Carry, ClockAhead, Restatable

Span = tuple[int, int]
SCHEDULED = "scheduled"
UNTIMED = ("injury", "mechanism")  # a time said with a wound is when he was hit: the card has no field for it
_ANOTHER = re.compile(r"\b(?:second|third|fourth|2nd|3rd|4th|another|again|repeat(?:ed)?|re-?dosed?|more)\b")  # 1 more
_APOLOGY = re.compile(r"\b(?:sorry|my\s+bad|my\s+mistake)\W*$")
CARRIED = ("question", "plan", "request", "conditional", "hypothetical", "scheduled")  # go on in "And a SAM splint."


class CardReader:
    """The card stage's reading of transcripts, with its assertion rules loaded once."""

    def __init__(self, rules: ContextRules) -> None:
        self.rules = rules

    def extract(self, request: CardExtract) -> CardEvents:
        return Extraction(request, self.rules).run()


class Extraction:
    """The events of one `card.extract` request."""

    def __init__(self, request: CardExtract, rules: ContextRules) -> None:
        self.request, self.rules = request, rules
        self.trail = Trail(request)
        self.uncertain = self.trail.uncertain()
        self.time_rewrites = self.trail.time_rewrites()
        self.logged_hhmm = local_hhmm(request.utterance_ts, request.utc_offset_min)
        self.key = f"j{request.journal_seq}" if request.journal_seq is not None else f"r{request.request_id}"
        self.casualty, carry = request.casualty, request.carry
        self.events: list[Event] = []
        self.correcting, self.last, self.asked_when = carry.correcting, carry.last, carry.asked_when
        self.others = {entry.casualty: entry for entry in carry.others}  # each other casualty's last entry
        self.casualty_doubted = carry.casualty_doubted
        self.asked, self.undone, self.open_status = carry.asked, carry.undone, carry.open_status
        self.inherited: str | None = None  # how the sentence before was said, for one that only continues it
        self.statuses: list[str] = []  # how each mention of the current sentence was said
        self.undone_at = -1  # where in the current sentence the mention now in `undone` was said
        self.head_time: Said | None = None  # a time said at the head of the utterance: its readings' column
        self.head_doubted = False  # that time was said in doubted words: its readings are unconfirmed
        self.sentence_head_doubted = False  # a time at the current sentence's head was said in doubted words
        self.sentences = 0
        self.clock_ahead: ClockAhead | None = None  # an act said as over at a time the kit's clock has not reached
        self.transcript = TranscriptRef(**request.model_dump(include={"journal_seq", "request_id", "source"}))

    def run(self) -> CardEvents:
        for sentence in split(self.request.text, self.rules.corrections):
            self._sentence(sentence)
        return CardEvents(events=self.events, casualty=self.casualty, carry=Carry(
            correcting=self.correcting, last=self.last, others=list(self.others.values())[-MAX_OTHERS:],
            casualty_doubted=self.casualty_doubted, asked=self.asked, asked_when=self.asked_when,
            undone=self.undone, open_status=self.open_status), clock_ahead=self.clock_ahead)

    def _sentence(self, s: Sentence) -> None:
        said_words = words(s.lower, s.start, s.end)
        found: list[Switch | Finding] = [*switches(s), *rule_findings(s, frozenset(w.text for w in said_words))]
        asked, undone, self.inherited = self.asked, self.undone, self.open_status  # each lasts one sentence
        self.asked = dialogue.asked(s) if s.mark == "?" or dialogue.asks_for(s) else None
        self.undone, self.undone_at, self.open_status, self.statuses = None, -1, None, []
        if asked is not None and s.mark != "?":  # "What's his pulse?" "One twenty-eight, radial."
            found = dialogue.answered(s, asked, found) or found
        asked_when, self.asked_when = self.asked_when, dialogue.asked_when(s, found)
        if asked_when is not None and not found and (when := dialogue.time_answer(s, times(
                s, self.time_rewrites, self.logged_hhmm))):  # "What time did his TQ go on?" "Nine forty one."
            self._emit(asked_when.what, when.start, when.end, "answer.time", when, {  # the entry it is, if on the card
                "assertion": "restated", "uncertain": self._doubted(when.start, when.end) or self.casualty_doubted})
            return
        if not found and not s.cues and not self.correcting and undone is None:
            if self.last is not None and self.last.casualty in (None, self.casualty) and \
                    takes_back_the_last(self.rules, s, said_words):  # "Take that off his card, he spat it out"
                self._emit(self.last.what, *trimmed(s.text, s.start, s.end), "retracted", None,
                           {"negated": True, "assertion": RETRACTED})
                self.last = None
                return
            self.open_status = "question" if s.mark == "?" else None
            if self.sentences == 0 and (head := heading_time(s, times(s, self.time_rewrites, self.logged_hhmm))):
                doubted = doubted_time(s, self.uncertain, s.start, s.end)  # "PFC update, 1300.": the readings' time
                self.head_time, self.head_doubted, self.sentences = head, doubted, 1
            return
        said = times(s, self.time_rewrites, self.logged_hhmm)
        heads = [f.named if isinstance(f, Finding) else (f.start, f.end) for f in found]
        context = SentenceContext(self.rules, s, heads, said_words)
        self.sentences += 1
        stretches = [(s.start, s.start)] if self.correcting else []
        stretches += s.cues
        self.correcting = False
        order = sorted(found, key=lambda f: f.named[0] if isinstance(f, Finding) else f.start)
        findings = [f for f in order if isinstance(f, Finding)]
        first_mention = findings[0].named[0] if findings else s.end
        self.sentence_head_doubted = doubted_time(s, self.uncertain, s.start, first_mention)
        switched = [f.start for f in found if isinstance(f, Switch)]
        lead = lead_time(s, said, findings, context, switched)
        readings_time = set_time(s, said, findings, context) or (
            self.head_time if not said and not switched else None)
        if self.sentences == 1:  # "Casualty one, at 0931 ...": the readings after it, until a time or a switch
            self.head_time = lead if lead is not None and all(at < lead.start for at in switched) else None
            self.head_doubted = self.sentence_head_doubted
        elif said or switched:
            self.head_time, self.head_doubted = None, False
        for i, (_, cue_end) in enumerate([(s.start, s.start), *stretches]):
            until = stretches[i][0] if i < len(stretches) else s.end
            start = s.start if i == 0 else cue_end
            emitted = False  # an entry after the cue, or the last one taken back: no slot to lay over the last
            first = next((f.named[0] for f in findings if start <= f.named[0] < until), until)
            laid = i > 0 and first < until and slot_clause(s, start, first) and \
                self._restatement(s, start, first, said)  # "sats 93, no, 91, then resps 22": what follows is new
            for item in (f for f in order if start <= (f.named[0] if isinstance(f, Finding) else f.start) < until):
                if isinstance(item, Switch):
                    self._switch(item)
                else:
                    vital = item.what.kind in VITAL_KINDS  # a bare heading ("Eleven thirty, ...") times readings alone
                    emitted |= self._finding(s, item, said, (lead if vital or not (lead and lead.heads) else None) or (
                        readings_time if vital else None), context, correcting=i > 0 and not laid) or \
                        self.statuses[-1:] == [RETRACTED]
            if i > 0 and not emitted:
                self._restatement(s, start, until, said)
        self._redone(s, heads, context, said, undone)
        carried = [status for status in self.statuses if status in CARRIED]
        if carried and len(carried) == len(self.statuses):  # nothing in it done: a sentence that continues it isn't
            self.open_status = carried[-1]

    def _redone(self, s: Sentence, heads: list[Span], context: SentenceContext, said: list[Said],
                undone: Restatable | None) -> None:
        """'NPA wouldn't pass on the right, got it in on the left': a clause that refers back to what failed or came
        off, in this sentence or the one before, and says it done, is that thing done, with the clause's slots."""
        for start, end, refers in dialogue.redone(s, heads, context.done_words):
            before = self.undone if self.undone is not None and self.undone_at < start else undone
            if before is None or context.status((refers, refers), before.what.kind).status != DONE \
                    or context.denied(start, refers):
                continue  # "IV blew, we'll put another one in": planned; "we didn't put it back on": not done
            end = max(end, s.clause_of(start)[1])
            laid = restated(s, start, end, before.what, said)
            what, when = laid if laid is not None else (before.what, None)
            start, end = trimmed(s.text, start, end)
            self._emit(what, start, end, "redone", when, {
                "out_of_range": out_of_range(what), "uncertain": self._doubted(start, end) or self.casualty_doubted})
            self.undone = undone = None

    def _switch(self, switch: Switch) -> None:
        if switch.garbled:
            self.casualty_doubted = True
            return
        number = switch.number if switch.number is not None else min(self.casualty + 1, MAX_CASUALTY)
        if self.last is None or self.last.casualty != number:  # "Back to one, correction, left arm": his last entry
            if self.last is not None and self.last.casualty is not None:
                self.others.pop(self.last.casualty, None)
                self.others[self.last.casualty] = self.last
            self.last = self.others.pop(number, None)
        self.casualty = number
        self.casualty_doubted = self._doubted(switch.start, switch.end)
        self._emit(CasualtySwitch(number=number), switch.start, switch.end, "casualty", None, {})

    def _finding(self, s: Sentence, finding: Finding, said: list[Said], lead: Said | None,
                 context: SentenceContext, correcting: bool) -> bool:
        """Emit what the mention is said as; True when it gave a positive event."""
        assertion = context.status(finding.named, asserted_as(finding.what))
        again = assertion.status in self.rules.repeats and not _ANOTHER.search(s.lower, *s.clause_of(finding.named[0]))
        status, doubted = DONE if assertion.status in self.rules.repeats else assertion.status, []
        own = own_time(s, finding, said, context) if said else None
        if status != DONE and assertion.may_be_done and all(self._doubted(*w) for w in assertion.by):
            status, doubted = DONE, list(assertion.by)  # "Give" doubted: it may have been "Gave"
        elif status == DONE:
            doubted = [w for w in assertion.by if self._doubted(*w)]
        elif assertion.may_be_done and past(own, self.logged_hhmm):
            status = DONE  # "Put a TQ on his left leg at 0910", said at 1000: an imperative's form, a past act
        ahead = status == DONE and future(own or lead, self.logged_hhmm)
        if ahead and not context.past_words.intersection(assertion.by):
            status = SCHEDULED  # "TXA second gram at 1100", said at 1000: not given yet
        elif ahead:
            self.clock_ahead = clock_behind(self.clock_ahead, (own or lead).spoken, self.logged_hhmm)  # type: ignore
        if status == DONE and self.inherited and not assertion.by and dialogue.continues(s):
            status = self.inherited  # "Somebody bring me the HPMK." "And a SAM splint."
        last = self.last.what if self.last else None  # "TXA 2 g IV." "Scratch that, this one hasn't had TXA."
        if correcting and status == "absent" and last and (last.kind, getattr(last, "name", 0)) == (
                finding.what.kind, getattr(finding.what, "name", 0)):
            status = RETRACTED
        self.statuses.append(status)
        if status in ("failed", "removed"):
            self.undone, self.undone_at = Restatable(what=finding.what), finding.named[0]
        if status != DONE and status not in self.rules.notes:
            return False
        note = status != DONE
        if finding.rule.endswith(".incomplete") and not note:
            return False
        what = beside_the_last(s, finding, self.last.what if self.last and self.last.casualty in (None, self.casualty)
                               else None)
        if not note and self._same_tourniquet(what, finding.end):
            return True
        when = (own or lead) if not note and what.kind not in UNTIMED else None
        start, end = trimmed(s.text, *s.act_of(finding.named[0])) if note else (finding.start, finding.end)
        for a, b in doubted + ([(when.start, when.end)] if when is not None else []):
            start, end = min(start, a), max(end, b)  # the words it stands on: the time said, a doubted "Give"
        flags = {"negated": note, "assertion": assertion.status if again and status == DONE else status,
                 "correction": correcting and not note, "out_of_range": out_of_range(what),
                 "uncertain": bool(doubted) or ahead or self._doubted(start, end)
                 or (self.casualty_doubted and not note) or getattr(finding.what, "dose_to", None) is not None
                 or (when is None and not note and self._time_doubted(s, finding))}
        self._emit(what, start, end, finding.rule, when, flags)
        return not note

    def _restatement(self, s: Sentence, start: int, end: int, said: list[Said]) -> bool:
        """A correction cue followed by slots alone: laid over the last entry said (True); nothing after it: pending."""
        if not s.text[start:end].strip(" ,.:;!?-"):  # "TXA 2 g IV, sorry.": an apology after what was said, not a cue
            self.correcting = not (_APOLOGY.search(s.lower, s.start, start) and len(s.lower[s.start:start].split()) > 2)
            return False
        if self.last is None or self.last.casualty not in (None, self.casualty):
            return False  # "Back to one, you've got the wrong arm": the last entry said is casualty two's
        found = restated(s, start, end, self.last.what, said + time_restated(s, start, end, said, self.last))
        if found is None:
            return False
        what, when = found
        time = None if when is not None else EventTime(
            logged_ts=self.request.utterance_ts, logged_hhmm=self.logged_hhmm, spoken=self.last.spoken,
            relative_min=self.last.relative_min, at_hhmm=self.last.at_hhmm)
        words = trimmed(s.text, start, end)
        self._emit(what, *words, "correction.restated", when, {
            "correction": True, "out_of_range": out_of_range(what),
            "uncertain": self._doubted(*words) or self.casualty_doubted or getattr(what, "dose_to", None) is not None},
            time)
        return True

    def _doubted(self, start: int, end: int) -> bool:
        return any(a < end and start < b for a, b in self.uncertain)

    def _time_doubted(self, s: Sentence, finding: Finding) -> bool:
        """A time was said for this entry in doubted words, so none was read: in its clause ("BP 100/60 at 11.45"),
        at the head of its sentence ("At 11.40, resp rate 22, ..."), or, for a reading, at the utterance's head."""
        return doubted_time(s, self.uncertain, *s.clause_of(finding.named[0])) or self.sentence_head_doubted or (
            self.head_doubted and self.sentences > 1 and finding.what.kind in VITAL_KINDS)

    def _same_tourniquet(self, what: Any, end_char: int) -> bool:
        """A tourniquet said again right after the last (tcccd.plugins.card.rules_hemorrhage.tourniquet_again): the
        last event takes its type and its words."""
        last = self.events[-1] if self.events else None
        merged = tourniquet_again(what, last)
        if merged is None or last is None:
            return False
        start, end = last.words.start_char, max(last.words.end_char, end_char)
        self.events[-1] = last.model_copy(update={
            "what": merged, "words": TextSpan(start_char=start, end_char=end, text=self.request.text[start:end]),
            "heard": self.trail.heard(start, end), "uncertain": last.uncertain or self._doubted(start, end)})
        self._remember(self.events[-1])
        return True

    def _emit(self, what: object, start: int, end: int, rule: str, when: Said | None, flags: dict,
              time: EventTime | None = None) -> None:
        time = time or entry_times.event_time(self.request.utterance_ts, self.logged_hhmm, when)
        event = Event(
            id=f"{self.key}.{len(self.events)}", casualty=self.casualty, what=what, time=time,
            words=TextSpan(start_char=start, end_char=end, text=self.request.text[start:end]),
            heard=self.trail.heard(start, end), rule=rule,
            transcript=self.transcript, **flags)  # the same for every event: one frozen model, shared
        self.events.append(event)
        if not event.negated:
            self._remember(event)

    def _remember(self, event: Event) -> None:
        if event.kind not in ("casualty", "note", "responder"):
            self.last = Restatable(what=event.what, spoken=event.time.spoken, relative_min=event.time.relative_min,
                                   at_hhmm=event.time.at_hhmm, casualty=event.casualty)
