"""Every control message a worker sends, read in one place.

A worker says on its control socket that it is `ready` (or that set-up
failed), that it `profile_applied` a switch, and what it `released` for the
memory capper. Each type has one handler, given when the daemon is built; a
message from a replaced worker generation is ignored, and an unreadable or
unknown one is logged (once per worker and type) instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import structlog

from tcccd.core.supervisor import Supervisor
from tcccd.core.workers import WorkerHandle
from tcccd.wire.protocol import Message, ProtocolError

Handler = Callable[[WorkerHandle, Message], None]


class ControlRouter:
    def __init__(self, supervisor: Supervisor, handlers: Mapping[str, Handler]) -> None:
        self.supervisor = supervisor
        self.handlers = dict(handlers)
        self.log = structlog.get_logger()
        self._noted: set[tuple[str, str]] = set()

    def on_frames(self, frames: list[bytes]) -> None:
        handle = self.supervisor.handle_by_identity(frames[0])
        if handle is None:
            return  # a message from a worker generation that has since been replaced
        try:
            message = Message.from_frames(frames[1:])
        except ProtocolError as exc:
            self.log.error("unreadable control message from a worker", worker=handle.name, error=str(exc))
            return
        handler = self.handlers.get(message.type)
        if handler is not None:
            handler(handle, message)
        elif (handle.name, message.type) not in self._noted:
            self._noted.add((handle.name, message.type))
            self.log.warning("control message of unknown type from a worker", worker=handle.name,
                             type=message.type, known=sorted(self.handlers))
