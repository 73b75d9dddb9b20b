"""The small interfaces the daemon's parts receive from one another, named once.

A part that needs another receives it through its constructor typed as one of
these (or as a Protocol of its own, in its module, when only it needs one), as
the memory capper receives `CapperActions`: the reader sees what is used, a test
can pass a small stand-in at the boundary, and parts are built in dependency
order with no forward references. Which object implements each port is decided in
one place, tcccd.core.daemon.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tcccd.config import Config, ProfileFile
    from tcccd.record.journal import TranscriptJournal
    from tcccd.wire.alerts import Alert
    from tcccd.wire.protocol import Message
    from tcccd.wire.status import PluginHealth


class ConfigSource(Protocol):
    """The config in force; a reload replaces it, so a part asks each time instead of keeping one."""

    def current(self) -> Config: ...


class Publisher(Protocol):
    """The events socket: `topic` is `transcript`, `profile`, `alert` or `card`."""

    def publish(self, topic: str, message: Message) -> None: ...


class ErrorNotes(Protocol):
    """Status' recent errors (`last_errors`), for the operator's screen."""

    def note(self, request_id: str, text: str) -> None: ...


class AlertSink(Protocol):
    """What an operator must know now: published as an `alert` event and noted among the recent errors (`alert`),
    or published only, when it is good news (`tell`: a stage recovered)."""

    def alert(self, alert: Alert, request_id: str = "-") -> None: ...

    def tell(self, alert: Alert) -> None: ...


class JournalSource(Protocol):
    """The transcript journal in use (none while `transcripts.enabled` is false); a reload may replace it."""

    def journal(self) -> TranscriptJournal | None: ...


class TranscriptListener(Protocol):
    """Told of each transcript after it was journalled and published (a partial: published only)."""

    def heard(self, source: str, partial: bool, journal_seq: int | None) -> None: ...


class RunningProfile(Protocol):
    """The profile the workers run now, and its settings."""

    def name(self) -> str: ...

    def settings(self) -> ProfileFile: ...


class StageHealth(Protocol):
    """Each stage's plugin health as its worker last reported it (tcccd.core.roster.Roster)."""

    def stage_health(self) -> dict[str, PluginHealth]: ...


class Requester(Protocol):
    """A part of the daemon that sends requests through the broker like a client (tcccd.core.clients'
    InternalClient): ids are issued here, the request leaves from the main loop (never from inside the broker),
    and the replies to its own open requests wait in `replies()`."""

    def submit(self, type: str, data: dict | None = None, payload: bytes | None = None,
               deadline_s: float | None = None) -> str: ...

    def replies(self) -> list[Message]: ...
