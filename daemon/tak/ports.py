"""What the TAK side needs from the daemon, as small ports, and the parts that provide them over the daemon's own.

The TAK side reads the current mission's cards and the journal (where the send
log lives, and the words of a final transcript) through `CardDesk`, and speaks
through `Speaker`. `Desk` is CardDesk over the card store and the journal in
use; `Voice` is Speaker over the daemon's internal client `internal:tak`
(`speak` with `play: true`, routes.speak.play, like the card's read-back).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tcccd.card.store import CardStore
from tcccd.ports import JournalSource, Requester
from tcccd.wire.card import CardSet

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
        """Speak on the kit's speaker; the request's id."""

    def finished(self) -> list[str]:
        """The ids of the speech that ended since the last call (its final reply came)."""


class Desk:
    def __init__(self, store: CardStore, journal: JournalSource) -> None:
        self.store = store
        self.journal = journal

    def cards(self) -> tuple[int, CardSet]:
        return self.store.mission.number, self.store.projector.cards()

    def journal_path(self) -> Path | None:
        journal = self.journal.journal()
        return journal.path if journal is not None else None

    def transcript(self, journal_seq: int) -> tuple[str, str] | None:
        journal = self.journal.journal()
        entries = journal.since(0.0, journal_seq - 1, 1) if journal is not None else []
        return (entries[0].text, entries[0].source) if entries and entries[0].seq == journal_seq else None


class Voice:
    def __init__(self, client: Requester) -> None:
        self.client = client

    def say(self, text: str) -> str:
        return self.client.submit("speak", {"text": text, "play": True}, deadline_s=SPEAK_DEADLINE_S)

    def finished(self) -> list[str]:
        return [reply.id for reply in self.client.replies() if reply.final]
