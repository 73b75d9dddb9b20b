"""The one path every final transcript takes: journalled, then published.

From the microphone, a client's `transcribe` or `stream`, or the Wyoming door:
append to the journal (tcccd.record.journal), then publish with `journal_seq`
so a subscriber that reconnects knows where to resume (`transcripts.since`).
Partials are published as they come and never journalled. Whoever reads the
record as it grows (the casualty card, tcccd.card.keeper) is told of each
transcript after it was journalled and published (`heard`: its source, whether
it was a partial, its journal_seq). `JournalSlot` holds the journal in use, which a
reload may replace.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import structlog

from tcccd.ports import AlertSink, Publisher, RunningProfile, TranscriptListener
from tcccd.record.journal import Entry, JournalFull, TranscriptJournal, confidence_of
from tcccd.wire.alerts import JournalFull as JournalFullAlert


class JournalSlot:
    """The transcript journal in use (tcccd.ports.JournalSource); none while `transcripts.enabled` is false."""

    def __init__(self, journal: TranscriptJournal | None) -> None:
        self._journal = journal

    def journal(self) -> TranscriptJournal | None:
        return self._journal

    def use(self, journal: TranscriptJournal | None) -> None:
        """A reload changed the `transcripts:` section: the old journal is closed, the new one (or none) used."""
        if self._journal is not None:
            self._journal.close()
        self._journal = journal


class TranscriptFeed:
    """Final transcripts, journalled then published; partials published as they come (not journalled)."""

    def __init__(self, journal: JournalSlot, events: Publisher, profile: RunningProfile, alerts: AlertSink,
                 listeners: list[TranscriptListener]) -> None:
        self.journal = journal
        self.events = events
        self.profile = profile
        self.alerts = alerts
        self.listeners = listeners
        self.log = structlog.get_logger()

    def final(self, message: Any, source: str) -> Any:
        """The message as published: with data.source and, once journalled, data.journal_seq."""
        data = {**message.data, "source": source}
        journal = self.journal.journal()
        if journal is not None:
            segments = data.get("segments") or [{k: data[k] for k in ("start_s", "end_s", "text") if k in data}]
            entry = Entry(ts=time.time(), source=source, profile=self.profile.name(), request_id=message.id,
                          text=str(data.get("text", "")), confidence=confidence_of(segments), segments=segments)
            try:
                data["journal_seq"] = journal.append(entry)
            except JournalFull as exc:
                self._alert_unrecorded(message, str(exc))
        published = replace(message, data=data)
        self.events.publish("transcript", replace(published, stage=None))
        for listener in self.listeners:
            listener.heard(source, False, data.get("journal_seq"))
        return published

    def partial(self, message: Any, source: str) -> None:
        self.events.publish("transcript", replace(message, data={**message.data, "source": source}, stage=None))
        for listener in self.listeners:
            listener.heard(source, True, None)

    def _alert_unrecorded(self, message: Any, reason: str) -> None:
        """The medic's record has a gap: say it everywhere an operator looks, and still publish."""
        text = f"TRANSCRIPT NOT RECORDED: {reason}; free disk space in the state directory"
        self.log.critical("transcript journal cannot write", request_id=message.id, reason=reason)
        self.alerts.alert(JournalFullAlert(message=text, request_id=message.id), message.id)
