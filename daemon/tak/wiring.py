"""The card keeper and the TAK side behind one face, where the daemon hands the card its inputs.

The daemon gives the card keeper every journalled transcript (`heard`), the
replies to its own requests (`on_reply`), the card requests (`answer`), its
tick and its close. The TAK side needs the same, after the keeper: a spoken
command's transcript (the keeper has already marked it done, off the card), its
own read-backs' replies (`internal:tak`), `card.send` and `card.sends`. This
passes each to the part it belongs to, so the daemon wires one part, not two.
"""

from __future__ import annotations

from tcccd.card.keeper import CardKeeper
from tcccd.tak.ports import TAK_CLIENT
from tcccd.tak.requests import answer as tak_answer
from tcccd.tak.service import TakService
from tcccd.wire.messages import TAK_TYPES
from tcccd.wire.protocol import Message


class CardAndTak:
    def __init__(self, keeper: CardKeeper, tak: TakService) -> None:
        self.keeper = keeper
        self.tak = tak

    def heard(self, source: str, partial: bool, journal_seq: int | None) -> None:
        self.keeper.heard(source, partial, journal_seq)
        self.tak.heard(source, partial, journal_seq)

    def on_reply(self, client: bytes, message: Message) -> None:
        if client != TAK_CLIENT:
            self.keeper.on_reply(client, message)
        elif message.final:
            self.tak.spoken(message.id)

    def answer(self, message: Message) -> Message:
        return tak_answer(self.tak, message) if message.type in TAK_TYPES else self.keeper.answer(message)

    def tick(self, now: float) -> None:
        self.keeper.tick(now)
        self.tak.tick(now)

    def close(self) -> None:
        self.tak.close()
        self.keeper.close()
