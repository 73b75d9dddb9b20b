"""One final transcript in, the card events it holds out: the rules run sentence by sentence, in the order said.

For each sentence: the casualty switches and every rule's findings, sorted by
position (a switch applies to what follows it); then, per finding, whether it is
negated, whether a correction cue precedes it, the time said nearest to it, and
the flags: `uncertain` when any of its words is one the ASR was unsure of,
`out_of_range` when a value is outside what a body produces. A finding a rule
reports as incomplete (a vital without its number) is kept only when negated; a
treatment only asked for or talked about as kit ("grab the oxygen") is not kept.
Event ids are the transcript's key and the event's index, so that replaying the
same transcript gives the same ids and the log stores it once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tcccd.plugins.card import rules_given, rules_header, rules_hemorrhage, rules_injury, rules_treatments, rules_vitals
from tcccd.plugins.card.context import (
    MAX_CASUALTY,
    Said,
    Switch,
    correction_from,
    local_hhmm,
    nearest,
    negated,
    not_done,
    shifted,
    switches,
    times,
)
from tcccd.plugins.card.finding import Finding, out_of_range
from tcccd.plugins.card.sentences import Sentence, split
from tcccd.plugins.card.trail import Trail
from tcccd.wire.card_events import CasualtySwitch, Event, EventTime, TextSpan, TranscriptRef
from tcccd.wire.card_stage import CardEvents, CardExtract

Rule = Callable[[Sentence], Iterator[Finding]]
TREATMENTS = ("tourniquet", "dressing", "airway", "breathing", "access", "fluid", "medication", "hypothermia",
              "eye_shield", "splint", "pill_pack")
RULES: tuple[Rule, ...] = (
    rules_header.evacuation, rules_header.last_four, rules_header.battle_roster, rules_header.allergies,
    rules_header.responder, rules_header.notes, rules_injury.mechanisms, rules_injury.injuries,
    rules_injury.burn_extent, rules_hemorrhage.tourniquets, rules_hemorrhage.dressings, rules_treatments.airway,
    rules_treatments.breathing, rules_given.access, rules_given.fluids, rules_given.medications,
    rules_vitals.pulses, rules_vitals.blood_pressures, rules_vitals.respiratory_rates, rules_vitals.saturations,
    rules_vitals.avpu, rules_vitals.pain, rules_treatments.hypothermia, rules_treatments.eye_shields,
    rules_treatments.splints, rules_treatments.pill_pack)


class Extraction:
    """The events of one `card.extract` request."""

    def __init__(self, request: CardExtract) -> None:
        self.request = request
        self.trail = Trail(request)
        self.uncertain = self.trail.uncertain()
        self.time_rewrites = self.trail.time_rewrites()
        self.logged_hhmm = local_hhmm(request.utterance_ts, request.utc_offset_min)
        self.key = f"j{request.journal_seq}" if request.journal_seq is not None else f"r{request.request_id}"
        self.casualty = request.casualty
        self.events: list[Event] = []
        self.correcting = False

    def run(self) -> CardEvents:
        for sentence in split(self.request.text):
            self._sentence(sentence)
        return CardEvents(events=self.events, casualty=self.casualty)

    def _sentence(self, s: Sentence) -> None:
        said = times(s, self.time_rewrites)
        cue = correction_from(s)
        found: list[Switch | Finding] = [*switches(s)]
        for rule in RULES:
            found += rule(s)
        found.sort(key=lambda f: f.start)
        carried, corrected_here = self.correcting, False
        for item in found:
            if isinstance(item, Switch):
                self._switch(item)
                continue
            after_cue = cue is not None and item.start >= cue
            corrected_here |= self._finding(s, item, said, carried or after_cue) and after_cue
        self.correcting = cue is not None and not corrected_here  # "Correction." alone: the next sentence corrects

    def _switch(self, switch: Switch) -> None:
        number = switch.number if switch.number is not None else min(self.casualty + 1, MAX_CASUALTY)
        self.casualty = number
        self._emit(CasualtySwitch(number=number), switch.start, switch.end, "casualty", None, {})

    def _finding(self, s: Sentence, finding: Finding, said: list[Said], correcting: bool) -> bool:
        is_negated = negated(s, finding.start, finding.end)
        if not is_negated and self._same_tourniquet(finding):
            return True
        if finding.rule.endswith(".incomplete") and not is_negated:
            return False
        if finding.what.kind in TREATMENTS and not is_negated and not_done(s, finding.start):
            return False
        when = nearest(said, finding.start, finding.end) if not is_negated else None
        start, end = s.clause_of(finding.start) if is_negated else (finding.start, finding.end)
        if is_negated:  # a note keeps the whole clause: "no pulse in the left wrist", not "pulse in the left wrist"
            start, end = _trimmed(s.text, start, end)
        if when is not None:
            start, end = min(start, when.start), max(end, when.end)
        flags = {"negated": is_negated, "correction": correcting and not is_negated,
                 "out_of_range": out_of_range(finding.what),
                 "uncertain": any(a < end and start < b for a, b in self.uncertain)}
        self._emit(finding.what, start, end, finding.rule, when, flags)
        return True

    def _same_tourniquet(self, finding: Finding) -> bool:
        """'Tourniquet applied to the left leg at 0912. CAT tourniquet.': a tourniquet said with no limb and no
        category right after another (nothing between, same transcript) is that tourniquet again, and gives it its
        type; the sentence-level rule does the same within one sentence (rules_hemorrhage). Two tourniquets said
        one after the other are told apart by their limbs, which is what a medic says of a second one."""
        what, last = finding.what, self.events[-1] if self.events else None
        if what.kind != "tourniquet" or what.limb is not None or what.category not in (None, "extremity") or \
                last is None or last.kind != "tourniquet" or last.negated:
            return False
        if what.device is not None and last.what.device not in (None, what.device):
            return False
        start, end = last.words.start_char, max(last.words.end_char, finding.end)
        merged = last.what.model_copy(update={"device": last.what.device or what.device})
        self.events[-1] = last.model_copy(update={
            "what": merged, "words": TextSpan(start_char=start, end_char=end, text=self.request.text[start:end]),
            "heard": self.trail.heard(start, end),
            "uncertain": last.uncertain or any(a < end and start < b for a, b in self.uncertain)})
        return True

    def _emit(self, what: object, start: int, end: int, rule: str, when: Said | None, flags: dict) -> None:
        at = None
        if when is not None:
            at = when.spoken if when.spoken else shifted(self.logged_hhmm, when.relative_min or 0.0)
        time = EventTime(logged_ts=self.request.utterance_ts, logged_hhmm=self.logged_hhmm,
                         spoken=when.spoken if when else None, relative_min=when.relative_min if when else None,
                         at_hhmm=at)
        self.events.append(Event(
            id=f"{self.key}.{len(self.events)}", casualty=self.casualty, what=what, time=time,
            words=TextSpan(start_char=start, end_char=end, text=self.request.text[start:end]),
            heard=self.trail.heard(start, end), rule=rule,
            transcript=TranscriptRef(journal_seq=self.request.journal_seq, request_id=self.request.request_id,
                                     source=self.request.source), **flags))


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def extract(request: CardExtract) -> CardEvents:
    return Extraction(request).run()
