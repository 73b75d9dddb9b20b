"""Sent on the medic's word: a spoken "send nine line" is read back, and sent only on a second, explicit "send".

The first command builds the CASEVAC as it would leave (the cards' confirmed
and undoubted entries, the position now) and reads it back: "Nine line for
casualty one: urgent one, litter one. Say send to confirm." Only a "send" from
the same source (the microphone, or the same client path) within
`tak.confirm_window_s` after the read-back ended sends exactly what was read
back; no confirmation, a "cancel", or a new command: nothing is sent, and the
kit says so. A "send" with nothing waiting sends nothing. When nothing can be
sent (TAK off, no card, no position) the kit says why instead of asking.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import structlog

from tcccd.tak.commands import parse
from tcccd.tak.ports import Refusal, Speaker


class Prepared(Protocol):
    what: str


class SendDesk(Protocol):
    def prepare(self, casualty: int | None, what: str) -> Prepared | Refusal:
        """The CASEVAC as it would be sent now, or why nothing can be."""

    def commit(self, prepared: Prepared, by: str, via: str) -> str:
        """Logged and handed to the link; the words that say so ('Sent.', 'Queued: ...')."""

    def words(self, prepared: Prepared) -> str:
        """The read-back of a prepared CASEVAC."""

    def window_s(self) -> float:
        """How long a read-back waits for its 'send'."""


@dataclass(frozen=True)
class Waiting:
    prepared: Prepared
    source: str
    speech_id: str
    deadline: float  # monotonic; moved to the end of the read-back + the window when its speech ends


class VoiceConfirm:
    def __init__(self, desk: SendDesk, speaker: Speaker) -> None:
        self.desk = desk
        self.speaker = speaker
        self.waiting: Waiting | None = None
        self.counters = {"voice_asked": 0, "voice_sent": 0, "voice_expired": 0, "voice_cancelled": 0}
        self.log = structlog.get_logger()

    def heard(self, text: str, source: str, now: float) -> None:
        """A final transcript: act on it when the whole of it is a command."""
        command = parse(text)
        if command is None:
            return
        if command.kind == "ask":
            self.counters["voice_asked"] += 1
            prepared = self.desk.prepare(command.casualty, command.what)
            if isinstance(prepared, Refusal):
                self.waiting = None
                self.speaker.say(f"Nothing sent: {prepared.text}.")
                return
            speech = self.speaker.say(f"{self.desk.words(prepared)} Say send to confirm.")
            self.waiting = Waiting(prepared, source, speech, now + self.desk.window_s())
            self.log.info("CASEVAC read back, waiting for send", source=source, window_s=self.desk.window_s())
        elif command.kind == "confirm":
            waiting = self.waiting
            if waiting is None or waiting.source != source or now > waiting.deadline:
                self.log.info("'send' heard with no CASEVAC waiting for it: nothing sent", source=source)
                return
            self.waiting = None
            self.counters["voice_sent"] += 1
            self.speaker.say(self.desk.commit(waiting.prepared, "medic", "voice"))
        elif self.waiting is not None:
            self.waiting = None
            self.counters["voice_cancelled"] += 1
            self.speaker.say("Cancelled. Nothing sent.")

    def spoken(self, speech_id: str, now: float) -> None:
        """A speech ended (its final reply): the window of the read-back it was starts now."""
        if self.waiting is not None and self.waiting.speech_id == speech_id:
            self.waiting = replace(self.waiting, deadline=now + self.desk.window_s())

    def tick(self, now: float) -> None:
        if self.waiting is not None and now > self.waiting.deadline:
            self.waiting = None
            self.counters["voice_expired"] += 1
            self.log.info("CASEVAC not confirmed in time: nothing sent")
            self.speaker.say("Not confirmed. Nothing sent.")

    def report(self) -> str | None:
        return None if self.waiting is None else f"{self.waiting.prepared.what} read back, waiting for 'send'"
