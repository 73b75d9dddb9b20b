"""The casualty cards as a projection of the card log: fold the events in log order, apply the reviews.

The card holds no state of its own: `project(events, reviews)` rebuilds every
card from the log, and `Projector` keeps them up to date one appended event at a
time (cheap: the card changes within milliseconds of a transcript). Both give
the same cards, because both fold the same events with the same reviews; a
review rebuilds its casualty's card, since rejecting a correction brings back
the value it replaced.

How an event lands: a rejected one is left off (and listed in `rejected`); a
negated one or a dictated note goes to G notes, in the medic's words; a
correction replaces the casualty's latest entry of its kind (the same drug,
fluid or body region when one was named), keeping the slots it does not say;
a single field (evacuation category, last four...) keeps the latest value said
and names the ones it replaced; a repeat of the same mechanism, injury, airway,
eye shield, splint or hypothermia treatment replaces the earlier one instead of
listing it twice; one said again at a handover or in a summary (assertion
`restated`) is the latest entry every slot and time of it agrees with, given
the slots that one lacked, and where none agrees a new entry; vitals go to the
column of the time said, or of the utterance's clock minute.
"""

from __future__ import annotations

from tcccd.wire.card import Card, CardSet, Entry, VitalsColumn
from tcccd.wire.card_events import VITAL_KINDS, Event, Review

PLACES: dict[str, tuple[str, str]] = {
    "battle_roster": ("a_header", "battle_roster"), "last_four": ("a_header", "last_four"),
    "evacuation": ("a_header", "evac_category"), "mobility": ("a_header", "mobility"),
    "allergies": ("a_header", "allergies"), "mechanism": ("b_injury", "mechanisms"),
    "injury": ("b_injury", "injuries"), "burn_extent": ("b_injury", "burn_extent"),
    "tourniquet": ("b_injury", "tourniquets"), "dressing": ("e_treatments", "hemorrhage"),
    "airway": ("e_treatments", "airway"), "breathing": ("e_treatments", "breathing"),
    "access": ("e_treatments", "access"), "fluid": ("e_treatments", "fluids"),
    "medication": ("f_medications", "medications"), "hypothermia": ("f_medications", "hypothermia"),
    "eye_shield": ("f_medications", "eye_shields"), "splint": ("f_medications", "splints"),
    "pill_pack": ("f_medications", "pill_pack"),
}
REPEATS_REPLACE = ("mechanism", "injury", "airway", "eye_shield", "splint", "hypothermia", "pill_pack")
CORRECTION_KEYS = {"medication": "name", "fluid": "product", "injury": "region"}
RETRACTED = "retracted"  # the assertion of an entry taken back (profiles/card/context.yaml)
RESTATED = "restated"  # the assertion of what is done, said again (a handover): the matching entry, not a second one


def _restating(event: Event, replaced: Entry | None) -> Event:
    """A correction says the slots it restates ("wait, the TQ was 0901"): the ones it does not say stay as the entry
    it replaces had them (the TQ's limb), rather than going blank."""
    if replaced is None or type(replaced.event.what) is not type(event.what):
        return event
    if event.what.kind == "medication" and event.what.name != replaced.event.what.name:
        return event  # "No, that was ketamine": the morphine's dose and route were the morphine's (a unit of
        # plasma corrected to whole blood is still a unit)
    kept = {name: value for name, value in replaced.event.what if value is not None
            and getattr(event.what, name) is None}
    update: dict = {"what": event.what.model_copy(update=kept)} if kept else {}
    if event.assertion == RESTATED and event.time.at_hhmm is None:  # "Handover: one gram of TXA IV": given at 0952
        update["time"] = replaced.event.time
    return event.model_copy(update=update) if update else event


def _same_thing(event: Event, entry: Entry) -> bool:
    """Whether `event` may be `entry` said again: every slot and time both say is the same."""
    if type(entry.event.what) is not type(event.what):
        return False
    if None not in (event.time.at_hhmm, entry.event.time.at_hhmm) and event.time.at_hhmm != entry.event.time.at_hhmm:
        return False
    return all(value is None or getattr(event.what, name) in (None, value) for name, value in entry.event.what)


def _adds_nothing(event: Event, entry: Entry) -> bool:
    return event.time.at_hhmm in (None, entry.event.time.at_hhmm) and all(
        value is None or getattr(entry.event.what, name) == value for name, value in event.what)


class _Builder:
    """One casualty's card, folded event by event."""

    def __init__(self, casualty: int, verdicts: dict[str, str]) -> None:
        self.card = Card(casualty=casualty)
        self.verdicts = verdicts
        self.order: dict[str, int] = {}

    def add(self, event: Event) -> None:
        self.order[event.id] = len(self.order)
        verdict = self.verdicts.get(event.id)
        if verdict == "reject":
            self.card.rejected.append(event.id)
            return
        if event.kind == "casualty":
            return
        status = "confirmed" if verdict == "confirm" else (
            "unconfirmed" if event.uncertain or event.out_of_range else "recorded")
        if event.negated or event.kind == "note":
            note = Entry(event=event, status=status)
            if event.assertion == RETRACTED:  # "Scratch the TXA from earlier": the entry comes off the card
                self._replace(self._latest_of_kind(event, strict=True), note)
            self.card.g_notes.append(note)
            return
        replaced = self._latest_of_kind(event) if event.correction else self._said_before(event)
        if replaced is not None and event.assertion == RESTATED and _adds_nothing(event, replaced):
            return  # "Handover: right leg CAT at 0950": the entry stands as it was made
        entry = Entry(event=_restating(event, replaced), status=status)
        self._replace(replaced, entry)
        if event.kind in VITAL_KINDS:
            self._vital(entry)
        elif event.kind == "responder":
            self._responder(entry)
        else:
            self._place(entry)

    def _place(self, entry: Entry) -> None:
        section, name = PLACES[entry.event.kind]
        holder = getattr(self.card, section)
        current = getattr(holder, name)
        if not isinstance(current, list):
            self._replace(current, entry)
            setattr(holder, name, entry)
            return
        if entry.event.kind in REPEATS_REPLACE:
            same = next((e for e in current if e.event.what == entry.event.what), None)
            if same is not None:
                self._replace(same, entry)
        current.append(entry)

    def _vital(self, entry: Entry) -> None:
        time = entry.event.time
        spoken = time.at_hhmm is not None
        at = time.at_hhmm if spoken else time.logged_hhmm
        column = next((c for c in self.card.c_vitals if c.time == at and c.spoken == spoken), None)
        if column is None:
            column = VitalsColumn(time=at, spoken=spoken)
            self.card.c_vitals.append(column)
        earlier = getattr(column, entry.event.kind)
        if earlier is not None:  # the same reading said again for this time: the later one stands
            entry.replaces += [earlier.event.id, *earlier.replaces]
        setattr(column, entry.event.kind, entry)

    def _responder(self, entry: Entry) -> None:
        what = entry.event.what
        for field in ("name", "last_four"):
            if getattr(what, field) is not None:
                self._replace(getattr(self.card.h_responder, field), entry)
                setattr(self.card.h_responder, field, entry.model_copy(deep=True))

    def _latest_of_kind(self, event: Event, strict: bool = False) -> Entry | None:
        """The latest entry of the event's kind, of its drug, product or region where it names one (where none
        is of it, any of the kind, unless `strict`: a retraction of the TXA never takes the ketamine)."""
        live = [e for e in self.entries() if e.event.kind == event.kind]
        key = CORRECTION_KEYS.get(event.kind)
        if key and getattr(event.what, key) is not None:
            same = [e for e in live if getattr(e.event.what, key) == getattr(event.what, key)]
            live = same if same or strict else live
        return max(live, key=lambda e: self.order[e.event.id], default=None)

    def _said_before(self, event: Event) -> Entry | None:
        """For a restated event, the latest entry it may be (its slots filled from the event's), never one from the
        same transcript ("so far: two CATs, left leg" is two); else None."""
        if event.assertion != RESTATED or event.kind in VITAL_KINDS:
            return None
        said_in = event.id.rsplit(".", 1)[0]
        same = [e for e in self.entries() if e.event.kind == event.kind and _same_thing(event, e)
                and e.event.id.rsplit(".", 1)[0] != said_in]
        return max(same, key=lambda e: self.order[e.event.id], default=None)

    def _replace(self, old: Entry | None, new: Entry) -> None:
        """Take `old` off the card (wherever it is) and record in `new` that it replaced it."""
        if old is None:
            return
        new.replaces += [old.event.id, *old.replaces]
        self._remove(old.event.id)

    def _remove(self, event_id: str) -> None:
        for section, name in set(PLACES.values()):
            holder = getattr(self.card, section)
            current = getattr(holder, name)
            if isinstance(current, list):
                current[:] = [e for e in current if e.event.id != event_id]
            elif current is not None and current.event.id == event_id:
                setattr(holder, name, None)
        for column in self.card.c_vitals:
            for kind in VITAL_KINDS:
                if getattr(column, kind) is not None and getattr(column, kind).event.id == event_id:
                    setattr(column, kind, None)
        self.card.c_vitals[:] = [c for c in self.card.c_vitals if any(getattr(c, k) for k in VITAL_KINDS)]

    def entries(self) -> list[Entry]:
        found = []
        for section, name in set(PLACES.values()):
            current = getattr(getattr(self.card, section), name)
            found += current if isinstance(current, list) else ([current] if current else [])
        found += [getattr(c, k) for c in self.card.c_vitals for k in VITAL_KINDS if getattr(c, k)]
        found += [e for e in (self.card.h_responder.name, self.card.h_responder.last_four) if e]
        return found


class Projector:
    """Every casualty's card, kept current as the log grows."""

    def __init__(self, reviews: list[Review] | None = None) -> None:
        self._events: dict[int, list[Event]] = {}
        self._verdicts: dict[str, str] = {r.event: r.action for r in reviews or []}
        self._builders: dict[int, _Builder] = {}

    def apply(self, event: Event) -> Card:
        """Fold one appended event in; the card it changed."""
        self._events.setdefault(event.casualty, []).append(event)
        builder = self._builders.setdefault(event.casualty, _Builder(event.casualty, self._verdicts))
        builder.add(event)
        return builder.card

    def review(self, review: Review) -> Card | None:
        """Apply one appended review; the card it changed (rebuilt from its events), None for an unknown event."""
        self._verdicts[review.event] = review.action
        for casualty, events in self._events.items():
            if any(e.id == review.event for e in events):
                builder = _Builder(casualty, self._verdicts)
                for event in events:
                    builder.add(event)
                self._builders[casualty] = builder
                return builder.card
        return None

    def card(self, casualty: int) -> Card | None:
        builder = self._builders.get(casualty)
        return builder.card if builder else None

    def cards(self) -> CardSet:
        return CardSet(cards=[self._builders[c].card for c in sorted(self._builders)])

    def holds(self, event_id: str) -> bool:
        """The event is on one of these cards' logs (a review of it can apply)."""
        return any(e.id == event_id for events in self._events.values() for e in events)

    def unconfirmed(self) -> int:
        """Fields on the cards shown unconfirmed, awaiting the medic's review."""
        return sum(e.status == "unconfirmed" for b in self._builders.values() for e in b.entries())


def project(events: list[Event], reviews: list[Review]) -> CardSet:
    """Every card, rebuilt from the log: the events in log order, then the reviews."""
    projector = Projector(reviews)
    for event in events:
        projector.apply(event)
    return projector.cards()
