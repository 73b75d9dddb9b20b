"""What the TAK side needs from the daemon, as small ports, and the daemon's parts that provide them.

The TAK side reads the current mission's cards and the journal (where the send
log lives, and the words of a final transcript) through `CardDesk`, and speaks
through `Speaker`. `DaemonDesk` and `BrokerSpeaker` are those ports over the
card keeper, the transcript feed's journal and the broker.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tcccd.card.keeper import CardKeeper
from tcccd.core.clients import INTERNAL_CLIENT
from tcccd.record.journal import TranscriptJournal
from tcccd.wire.card import CardSet
from tcccd.wire.protocol import Message, new_id

TAK_CLIENT = INTERNAL_CLIENT + b"tak"
SPEAK_DEADLINE_S = 30.0


@dataclass(frozen=True)
class Refusal:
    """Why nothing can be sent: an error code of the protocol and the words for the medic."""

    code: str
    text: str


class CardDesk(Protocol):
    def cards(self) -> tuple[int, CardSet]:
        """The mission under way and its cards."""

    def journal_path(self) -> Path | None:
        """The journal's file (the send log lives beside the card log in it); None when it is disabled."""

    def transcript(self, journal_seq: int) -> tuple[str, str] | None:
        """A journalled final transcript's text and source (mic, client, wyoming)."""


class Speaker(Protocol):
    def say(self, text: str) -> str:
        """Speak on the kit's speaker; the request's id (its final reply ends the speech)."""


class DaemonDesk:
    def __init__(self, keeper: Callable[[], CardKeeper], journal: Callable[[], TranscriptJournal | None]) -> None:
        self.keeper = keeper
        self.journal = journal

    def cards(self) -> tuple[int, CardSet]:
        keeper = self.keeper()
        return keeper.mission.number, keeper.projector.cards()

    def journal_path(self) -> Path | None:
        journal = self.journal()
        return journal.path if journal is not None else None

    def transcript(self, journal_seq: int) -> tuple[str, str] | None:
        journal = self.journal()
        entries = journal.since(0.0, journal_seq - 1, 1) if journal is not None else []
        return (entries[0].text, entries[0].source) if entries and entries[0].seq == journal_seq else None


class BrokerSpeaker:
    """`speak` with `play: true` from the daemon's own client `internal:tak` (routes.speak.play)."""

    def __init__(self, submit: Callable[[bytes, Message], None]) -> None:
        self.submit = submit
        self._ids = itertools.count(1)
        self._token = new_id()[:8]

    def say(self, text: str) -> str:
        message = Message("speak", id=f"tak.{self._token}.{next(self._ids)}", final=True,
                          deadline_s=SPEAK_DEADLINE_S, data={"text": text, "play": True})
        self.submit(TAK_CLIENT, message)
        return message.id
