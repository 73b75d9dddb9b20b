"""The one path every final transcript takes: journalled, then published.

From the microphone, a client's `transcribe` or `stream`, or the Wyoming door:
append to the journal (tcccd.record.journal), then publish with `journal_seq`
so a subscriber that reconnects knows where to resume (`transcripts.since`).
Partials are published as they come and never journalled. Whoever reads the
record as it grows (the casualty card, tcccd.card.keeper) is told of each
transcript after it was journalled and published (`heard`: its source, whether
it was a partial, its journal_seq).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import structlog

from tcccd.record.journal import Entry, JournalFull, TranscriptJournal, confidence_of


class TranscriptFeed:
    """Final transcripts, journalled then published; partials published as they come (not journalled).

    The one path every final transcript takes, from the microphone or a client: append, then publish with
    `journal_seq` so a subscriber that reconnects knows where to resume (`transcripts.since`).
    """

    def __init__(self, journal: TranscriptJournal | None, publish: Callable[[str, Any], None],
                 profile: Callable[[], str], on_error: Callable[[str, str], None],
                 heard: Callable[[str, bool, int | None], None] = lambda source, partial, seq: None) -> None:
        self.journal = journal
        self.heard = heard
        self.publish = publish
        self.profile = profile
        self.on_error = on_error
        self.log = structlog.get_logger()

    def use_journal(self, journal: TranscriptJournal | None) -> None:
        """A reload changed the `transcripts:` section: the old journal is closed, the new one (or none) used."""
        if self.journal is not None:
            self.journal.close()
        self.journal = journal

    def final(self, message: Any, source: str) -> Any:
        """The message as published: with data.source and, once journalled, data.journal_seq."""
        data = {**message.data, "source": source}
        if self.journal is not None:
            segments = data.get("segments") or [{k: data[k] for k in ("start_s", "end_s", "text") if k in data}]
            entry = Entry(ts=time.time(), source=source, profile=self.profile(), request_id=message.id,
                          text=str(data.get("text", "")), confidence=confidence_of(segments), segments=segments)
            try:
                data["journal_seq"] = self.journal.append(entry)
            except JournalFull as exc:
                self._alert_unrecorded(message, str(exc))
        published = replace(message, data=data)
        self.publish("transcript", replace(published, stage=None))
        self.heard(source, False, data.get("journal_seq"))
        return published

    def partial(self, message: Any, source: str) -> None:
        self.publish("transcript", replace(message, data={**message.data, "source": source}, stage=None))
        self.heard(source, True, None)

    def _alert_unrecorded(self, message: Any, reason: str) -> None:
        """The medic's record has a gap: say it everywhere an operator looks, and still publish."""
        text = f"TRANSCRIPT NOT RECORDED: {reason}; free disk space in the state directory"
        self.log.critical("transcript journal cannot write", request_id=message.id, reason=reason)
        self.on_error(message.id, text)
        self.publish("alert", replace(message, type="alert", data={"kind": "journal_full", "message": text},
                                      payload=None, stage=None))
