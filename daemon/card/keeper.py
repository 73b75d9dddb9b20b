"""The casualty card, kept by the daemon: every journalled transcript through the card stage, in order, into the log.

The journal is the queue. Each final transcript the journal records (microphone,
`transcribe`, `stream`, Wyoming alike) wakes the keeper (tcccd.record.feed's
`heard`), which sends the oldest journal entry not yet extracted to the card
stage as a request of its own (`internal:card`, a key no outside client can
have, tcccd.core.clients), one at a time, so the current casualty of one
transcript is the one the previous transcript left. The events that come back
and the mark "this entry is done" are written in one fsync'd transaction
(tcccd.card.log), then folded into the cards (tcccd.record.
card_projection), then published on the `card` topic, then read back
(tcccd.card.readback). Because the journal, not memory, says what is left,
nothing is lost to kill -9, a card worker that crashes (the entry is sent again
once it is back), or a card stage that was down: at start the cards are rebuilt
from the log and every entry after the last one extracted is sent, in order,
each with what the previous one left (`casualty`, and `carry`: a correction
pending, the last entry said). A transcript the stage refuses (bad input) or
cannot finish (its worker lost, its deadline passed) five times is marked
skipped, with an alert: one bad entry never stops the card. A stage that is
away (busy, not connected) is waited for.
"""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from tcccd.card.log import CardLog, Extracted
from tcccd.card.mission_clock import MissionClock
from tcccd.card.projection import Projector
from tcccd.card.readback import ReadBack
from tcccd.card.requests import CardRequests
from tcccd.config import Config
from tcccd.core.clients import INTERNAL_CLIENT
from tcccd.record.journal import Entry, TranscriptJournal
from tcccd.wire.card import CardSet
from tcccd.wire.card_events import Event
from tcccd.wire.card_replies import CARD_MEDIA_TYPE, CardUpdate, card_payload
from tcccd.wire.card_stage import EVENTS_TYPE, EXTRACT_TYPE, CardEvents, CardExtract, Carry
from tcccd.wire.protocol import Message, new_id

CARD_CLIENT = INTERNAL_CLIENT + b"card"
EXTRACT_DEADLINE_S = 10.0
RETRY_MAX_S = 5.0
CRASHES_BEFORE_SKIP = 5
NOT_RETRIED = ("bad_message", "bad_request", "plugin_error", "too_large")  # the input is at fault, not the stage
STAGE_AWAY = ("busy", "unavailable", "no_stage", "no_route")  # not this transcript's doing: waited for, not counted
IN_PAYLOAD_BYTES = 48 * 1024  # a request body this big goes in the payload frame: the JSON header is capped at 64 KiB


@dataclass
class InFlight:
    request_id: str
    entry: Entry
    sent_at: float


class CardKeeper:
    def __init__(self, config: Callable[[], Config], journal: Callable[[], TranscriptJournal | None],
                 profile: Callable[[], str], submit: Callable[[bytes, Message], None],
                 publish: Callable[[str, Message], None], on_error: Callable[[str, str], None],
                 speaker_missing: Callable[[], str | None] = lambda: None) -> None:
        self.config = config
        self.journal = journal
        self.submit = submit
        self.publish = publish
        self.on_error = on_error
        self.readback = ReadBack(config, profile, submit, speaker_missing)
        self.mission = MissionClock()
        self.requests = CardRequests(self._open_log, self._projector, self.publish_card, self.mission,
                                     lambda: journal.last_seq() if (journal := self.journal()) else 0,
                                     self.mission_closed)
        self.log = structlog.get_logger()
        self.card_log: CardLog | None = None
        self._log_path: Any = None
        self.projector = Projector()
        self.casualty, self.carry = 1, Carry()
        self.cursor = 0  # the last journal entry extracted (or skipped)
        self.in_flight: InFlight | None = None
        self.retry_at = 0.0
        self.failures: dict[int, int] = {}  # journal_seq -> times its request failed (the backoff)
        self.crashes: dict[int, int] = {}  # journal_seq -> times the stage could not finish it (lost, past deadline)
        self.heard_at: dict[int, float] = {}  # journal_seq -> when its final transcript was journalled
        self.latest_heard = 0  # the newest journal entry heard since start
        self.maybe_more = True
        self.counters = {"extracted": 0, "events": 0, "skipped": 0, "retries": 0}
        self._ids = itertools.count(1)
        self._token = new_id()[:8]

    # -- the log, following the journal ------------------------------------------------------------------------

    def _open_log(self) -> CardLog | None:
        """The card log in the current journal's file: opened (and the cards rebuilt) when the journal changed."""
        journal = self.journal()
        path = journal.path if journal is not None else None
        if self.card_log is not None and (path is None or self._log_path != path):
            self.card_log.close()
            self.card_log = None
        if path is not None and self.card_log is None:
            self.card_log = CardLog.open(path)
            self._log_path = path
            self.projector = self.mission.rebuild(self.card_log)
            self.casualty = self.card_log.current_casualty(self.mission.after_journal_seq)
            self.cursor, self.carry = self.card_log.last_extracted(), self.card_log.last_carry()
            self.in_flight, self.maybe_more = None, True
            self.log.info("casualty cards rebuilt from the card log", cards=len(self.projector.cards().cards),
                          extracted_up_to=self.cursor)
        return self.card_log

    def _projector(self) -> Projector:
        return self.projector

    # -- from the feed and the loop ----------------------------------------------------------------------------

    def heard(self, source: str, partial: bool, journal_seq: int | None) -> None:
        """A transcript was journalled and published (or a partial published): extract what is new."""
        self.readback.heard(source, partial)
        if partial:
            return
        if journal_seq is not None and EXTRACT_TYPE in self.config().routes:
            self.heard_at[journal_seq] = time.monotonic()
            self.latest_heard = max(self.latest_heard, journal_seq)
        self.maybe_more = True
        self.pump()

    def tick(self, now: float) -> None:
        """From the main loop: retries after a failure, backfill, read-backs waiting for the medic to pause."""
        self.pump()
        self.readback.flush(now)

    def pump(self) -> None:
        """Send the oldest journal entry not yet extracted, when none is in flight and the card stage is routed."""
        now = time.monotonic()
        if self.in_flight is not None or now < self.retry_at or not self.maybe_more:
            return
        log, journal = self._open_log(), self.journal()
        if log is None or journal is None or EXTRACT_TYPE not in self.config().routes:
            return
        entries = journal.since(0.0, self.cursor, 1)
        if not entries:
            self.maybe_more = False
            return
        self._send(entries[0], now)

    def _send(self, entry: Entry, now: float) -> None:
        if self.mission.starts_at(self.cursor, entry.seq):  # a new mission: before anyone is named, casualty one
            self.casualty, self.carry = 1, Carry()
        data = CardExtract(text=entry.text, segments=[s for s in entry.segments if isinstance(s.get("text"), str)],
                           journal_seq=entry.seq, request_id=entry.request_id[:128], source=entry.source[:32],
                           utterance_ts=entry.ts, utc_offset_min=time.localtime(entry.ts).tm_gmtoff // 60,
                           casualty=self.casualty, carry=self.carry).model_dump(mode="json")
        body = Message(EXTRACT_TYPE, id=f"card.{self._token}.{next(self._ids)}", final=True,
                       deadline_s=EXTRACT_DEADLINE_S, data=data)
        if len(body.to_frames()[0]) > IN_PAYLOAD_BYTES:
            body = Message(EXTRACT_TYPE, id=body.id, final=True, deadline_s=EXTRACT_DEADLINE_S,
                           payload=CardExtract.model_validate(data).model_dump_json().encode())
        self.in_flight = InFlight(body.id, entry, now)
        self.submit(CARD_CLIENT, body)  # a refusal may come back before this returns

    # -- replies -----------------------------------------------------------------------------------------------

    def on_reply(self, client: bytes, message: Message) -> None:
        """What the broker sends back to the daemon's own requests: the card stage's, or the read-back's."""
        if client != CARD_CLIENT:
            self.readback.on_reply(message)
            return
        flight = self.in_flight
        if flight is None or message.id != flight.request_id or not message.final:
            return
        self.in_flight = None
        if message.type == EVENTS_TYPE:
            try:
                result = CardEvents.model_validate_json(message.payload) if message.payload else \
                    CardEvents.model_validate(message.data)
            except ValueError as exc:
                self._skip(flight.entry, f"the card stage's reply was not card.events: {str(exc)[:300]}")
                return
            self._store(flight.entry, result)
        elif message.type == "error":
            self._failed(flight.entry, str(message.data.get("code")), str(message.data.get("message")))
        else:
            self._skip(flight.entry, f"the card stage answered {message.type!r}, not {EVENTS_TYPE!r}")

    def _store(self, entry: Entry, result: CardEvents) -> None:
        """Written (events and the done mark, one transaction), then folded into the cards, then published."""
        log = self._open_log()
        if log is None:
            return
        try:
            stored = log.append(list(result.events), Extracted(entry.seq, result.casualty, carry=result.carry))
        except sqlite3.DatabaseError as exc:
            self._retry_later(entry, f"card log not written: {exc}")
            return
        self.casualty, self.cursor, self.carry = result.casualty, entry.seq, result.carry
        self.failures.pop(entry.seq, None)
        self.crashes.pop(entry.seq, None)
        self.counters["extracted"] += 1
        self.counters["events"] += len(stored)
        stored = [event for event in stored if self.mission.holds(event)]  # a closed mission's late ones: logged
        self._apply(stored, entry.seq)
        heard_at = self.heard_at.pop(entry.seq, None)
        if heard_at is not None:
            self.log.info("casualty card updated", journal_seq=entry.seq, events=len(stored),
                          update_ms=round((time.monotonic() - heard_at) * 1000, 2))
        self.readback.say(stored)
        self.pump()

    def _apply(self, stored: list[Event], journal_seq: int) -> None:
        changed: dict[int, list[str]] = {}
        for event in stored:
            self.projector.apply(event)
            changed.setdefault(event.casualty, []).append(event.id)
        for casualty, ids in changed.items():
            self.publish_card(casualty, CardUpdate(casualty=casualty, cause="events", changed=ids,
                                                   journal_seq=journal_seq, mission=self.mission.number,
                                                   media_type=CARD_MEDIA_TYPE))

    def mission_closed(self, through_journal_seq: int) -> None:
        """After card.close: the new mission's cards (empty), casualty one next, and the topic told."""
        log = self._open_log()
        if log is None:
            return
        self.projector = self.mission.rebuild(log)
        if self.cursor >= through_journal_seq:  # else the closed mission's last words are still on their way
            self.casualty, self.carry = 1, Carry()
        update = CardUpdate(casualty=1, cause="closed", changed=[], mission=self.mission.number,
                            media_type=CARD_MEDIA_TYPE)
        self.publish("card", Message(CardUpdate.TYPE, data=update.to_data(), payload=card_payload(CardSet())))

    def publish_card(self, casualty: int, update: CardUpdate) -> None:
        """The `card` topic: one casualty's card as it now is, after the change is on disk."""
        card = self.projector.card(casualty)
        if card is None:
            return
        payload = card_payload(CardSet(cards=[card]))
        self.publish("card", Message(CardUpdate.TYPE, data=update.to_data(), payload=payload))

    def _failed(self, entry: Entry, code: str, text: str) -> None:
        if code in NOT_RETRIED:
            self._skip(entry, f"the card stage refused it ({code}): {text}")
            return
        crashes = self.crashes[entry.seq] = self.crashes.get(entry.seq, 0) + (code not in STAGE_AWAY)
        if crashes >= CRASHES_BEFORE_SKIP:
            self._skip(entry, f"the card stage could not finish it {crashes} times (last: {code}): {text}")
            return
        self._retry_later(entry, f"{code}: {text}")

    def _retry_later(self, entry: Entry, reason: str) -> None:
        """The stage is down, restarting or busy: the entry stays next in line, sent again after a backoff."""
        tries = self.failures[entry.seq] = self.failures.get(entry.seq, 0) + 1
        self.counters["retries"] += 1
        self.retry_at = time.monotonic() + min(RETRY_MAX_S, 0.25 * 2 ** (tries - 1))
        self.log.warning("card extract will be retried", journal_seq=entry.seq, reason=reason, tries=tries)

    def _skip(self, entry: Entry, reason: str) -> None:
        """Marked done with no events, and said loudly: the medic's words stay in the journal, not on the card."""
        text = f"CARD: transcript {entry.seq} ({entry.text[:60]!r}) is not on the card: {reason}"
        log = self._open_log()
        if log is not None:
            try:
                log.append([], Extracted(entry.seq, self.casualty, f"skipped: {reason[:500]}", self.carry))
            except sqlite3.DatabaseError as exc:
                self._retry_later(entry, f"card log not written: {exc}")
                return
        self.cursor = entry.seq
        self.counters["skipped"] += 1
        self.failures.pop(entry.seq, None)
        self.crashes.pop(entry.seq, None)
        self.log.error("transcript left off the casualty card", journal_seq=entry.seq, reason=reason)
        self.on_error(entry.request_id, text)
        self.publish("alert", Message("alert", data={"kind": "card_skipped", "message": text,
                                                     "request_id": entry.request_id, "reason": reason}))
        self.pump()

    # -- requests and status -----------------------------------------------------------------------------------

    def answer(self, message: Message) -> Message:
        return self.requests.answer(message)

    def report(self) -> dict[str, Any]:
        cards = self.projector.cards().cards
        return {**self.counters, "enabled": EXTRACT_TYPE in self.config().routes, "mission": self.mission.number,
                "casualty": self.casualty,
                "casualties": [c.casualty for c in cards], "unconfirmed": self.projector.unconfirmed(),
                "waiting": max(0, self.latest_heard - self.cursor), **self.readback.report()}

    def close(self) -> None:
        if self.card_log is not None:
            self.card_log.close()
            self.card_log = None
