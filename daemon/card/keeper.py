"""The casualty card, kept by the daemon: every journalled transcript through the card stage, in order, into the log.

The journal is the queue. Each final transcript the journal records (microphone,
`transcribe`, `stream`, Wyoming alike) wakes the keeper (it is the transcript
feed's listener, tcccd.ports.TranscriptListener), which sends the oldest journal
entry not yet extracted to the card stage as a request of its own (the internal
client `internal:card`, a key no outside client can have), one at a time, so the
current casualty of one transcript is the one the previous transcript left. The
events that come back and the mark "this entry is done" are written in one
fsync'd transaction, then folded into the cards and published (tcccd.card.store),
then read back (tcccd.card.readback). Because the journal, not memory, says what
is left, nothing is lost to kill -9, a card worker that crashes (the entry is sent
again once it is back), or a card stage that was down: at start the cards are
rebuilt from the log and every entry after the last one extracted is sent, in
order, each with what the previous one left (`casualty`, and `carry`: a
correction pending, the last entry said). A transcript the stage refuses (bad
input) or cannot finish (its worker lost, its deadline passed) five times is
marked skipped, with an alert: one bad entry never stops the card. A stage that
is away (busy, not connected) is waited for.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from tcccd.card.clock import ClockWatch
from tcccd.card.readback import ReadBack
from tcccd.card.store import CardStore
from tcccd.ports import AlertSink, ConfigSource, JournalSource, Requester
from tcccd.record.journal import Entry
from tcccd.wire.alerts import CardSkipped
from tcccd.wire.card_stage import EVENTS_TYPE, EXTRACT_TYPE, CardEvents, CardExtract
from tcccd.wire.protocol import Message

EXTRACT_DEADLINE_S = 10.0
RETRY_MAX_S = 5.0
CRASHES_BEFORE_SKIP = 5
NOT_RETRIED = ("bad_message", "bad_request", "plugin_error", "too_large")  # the input is at fault, not the stage
STAGE_AWAY = ("busy", "unavailable", "no_stage", "no_route")  # not this transcript's doing: waited for, not counted
IN_PAYLOAD_BYTES = 48 * 1024  # a request body this big goes in the payload frame: the JSON header is capped at 64 KiB


class Commands(Protocol):
    """Spoken commands to the kit (tcccd.tak.commands.SpokenCommands): never clinical facts."""

    def command(self, text: str) -> str | None:
        """The command a whole transcript is ('send nine line'), or None."""


@dataclass
class InFlight:
    request_id: str
    entry: Entry
    sent_at: float
    generation: int


class CardKeeper:
    def __init__(self, config: ConfigSource, journal: JournalSource, store: CardStore, stage: Requester,
                 readback: ReadBack, alerts: AlertSink, clock: ClockWatch, commands: Commands | None = None) -> None:
        self.config = config
        self.commands = commands  # a spoken command's transcript is marked done without the card stage
        self.journal = journal
        self.store = store
        self.stage = stage
        self.readback = readback
        self.alerts = alerts
        self.clock = clock
        self.log = structlog.get_logger()
        self.in_flight: InFlight | None = None
        self.retry_at = 0.0
        self.failures: dict[int, int] = {}  # journal_seq -> times its request failed (the backoff)
        self.crashes: dict[int, int] = {}  # journal_seq -> times the stage could not finish it (lost, past deadline)
        self.heard_at: dict[int, float] = {}  # journal_seq -> when its final transcript was journalled
        self.latest_heard = 0  # the newest journal entry heard since start
        self.maybe_more = True
        self.counters = {"extracted": 0, "events": 0, "skipped": 0, "retries": 0}

    # -- from the feed and the loop ----------------------------------------------------------------------------

    def heard(self, source: str, partial: bool, journal_seq: int | None) -> None:
        """A transcript was journalled and published (or a partial published): extract what is new."""
        self.readback.heard(source, partial)
        if partial:
            return
        if journal_seq is not None and self._routed():
            self.heard_at[journal_seq] = time.monotonic()
            self.latest_heard = max(self.latest_heard, journal_seq)
        self.maybe_more = True
        self.pump()

    def tick(self, now: float) -> None:
        """From the main loop: the stage's replies, retries after a failure, backfill, read-backs."""
        for reply in self.stage.replies():
            self._on_reply(reply)
        self.pump()
        self.readback.tick(now)

    def _routed(self) -> bool:
        return EXTRACT_TYPE in self.config.current().routes

    def pump(self) -> None:
        """Send the oldest journal entry not yet extracted, when none is in flight and the card stage is routed."""
        now = time.monotonic()
        log, journal = self.store.card_log(), self.journal.journal()
        if self.in_flight is not None and self.in_flight.generation != self.store.generation:
            self.in_flight, self.maybe_more = None, True  # the journal was reopened: its reply is not for this log
        if self.in_flight is not None or now < self.retry_at or not self.maybe_more:
            return
        if log is None or journal is None or not self._routed():
            return
        entries = journal.since(0.0, self.store.cursor, 1)
        if not entries:
            self.maybe_more = False
            return
        if self.commands is not None and (said := self.commands.command(entries[0].text)):
            self._skip(entries[0], f"a spoken command ({said}), not the card's", alert=False)
            return
        self._send(entries[0], now)

    def _send(self, entry: Entry, now: float) -> None:
        casualty, carry = self.store.context_before(entry.seq)
        extract = CardExtract(text=entry.text, segments=[s for s in entry.segments if isinstance(s.get("text"), str)],
                              journal_seq=entry.seq, request_id=entry.request_id[:128], source=entry.source[:32],
                              utterance_ts=entry.ts, utc_offset_min=time.localtime(entry.ts).tm_gmtoff // 60,
                              casualty=casualty, carry=carry)
        data = extract.model_dump(mode="json")
        if len(Message(EXTRACT_TYPE, data=data).to_frames()[0]) > IN_PAYLOAD_BYTES:
            request_id = self.stage.submit(EXTRACT_TYPE, payload=extract.model_dump_json().encode(),
                                           deadline_s=EXTRACT_DEADLINE_S)
        else:
            request_id = self.stage.submit(EXTRACT_TYPE, data, deadline_s=EXTRACT_DEADLINE_S)
        self.in_flight = InFlight(request_id, entry, now, self.store.generation)

    # -- replies -----------------------------------------------------------------------------------------------

    def _on_reply(self, message: Message) -> None:
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
        log = self.store.card_log()
        if log is None:
            return
        try:
            stored, shown = self.store.record(log, entry.seq, list(result.events), result.casualty, result.carry)
        except sqlite3.DatabaseError as exc:
            self._retry_later(entry, f"card log not written: {exc}")
            return
        self.failures.pop(entry.seq, None)
        self.crashes.pop(entry.seq, None)
        if result.clock_ahead is not None:
            self.clock.saw(result.clock_ahead, self.store.mission.number, entry.request_id)
        self.counters["extracted"] += 1
        self.counters["events"] += len(stored)
        heard_at = self.heard_at.pop(entry.seq, None)
        if heard_at is not None:
            self.log.info("casualty card updated", journal_seq=entry.seq, events=len(shown),
                          update_ms=round((time.monotonic() - heard_at) * 1000, 2))
        self.readback.say(shown)
        self.pump()

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

    def _skip(self, entry: Entry, reason: str, alert: bool = True) -> None:
        """Marked done with no events, and said loudly (`alert`): the medic's words stay in the journal."""
        text = f"CARD: transcript {entry.seq} ({entry.text[:60]!r}) is not on the card: {reason}"
        log = self.store.card_log()
        if log is not None:
            try:
                self.store.skip(log, entry.seq, reason)
            except sqlite3.DatabaseError as exc:
                self._retry_later(entry, f"card log not written: {exc}")
                return
        self.failures.pop(entry.seq, None)
        self.crashes.pop(entry.seq, None)
        if alert:
            self.counters["skipped"] += 1
            self.log.error("transcript left off the casualty card", journal_seq=entry.seq, reason=reason)
            self.alerts.alert(CardSkipped(message=text, request_id=entry.request_id, reason=reason),
                              entry.request_id)
        self.pump()

    # -- status -----------------------------------------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        store = self.store
        cards = store.projector.cards().cards
        return {**self.counters, "enabled": self._routed(), "mission": store.mission.number,
                "casualty": store.casualty, "casualties": [c.casualty for c in cards],
                "unconfirmed": store.projector.unconfirmed(), "waiting": max(0, self.latest_heard - store.cursor),
                **self.readback.report(), **self.clock.report(store.mission.number)}
