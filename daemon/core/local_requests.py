"""Requests the daemon answers itself: ping, status, profile.get, profile.set, transcripts.since and the card's.

They never reach a worker. `report()` is also what systemd's STATUS= line and
`tcccd status` show, so the health report is built here, in one place. Every
reply is built through its model (tcccd.wire.replies, tcccd.wire.status), the
one description of its fields that docs/protocol.md is generated from.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, Protocol

import psutil

from tcccd import __version__
from tcccd.card.requests import CardRequests
from tcccd.core import health
from tcccd.core.admission import Admission
from tcccd.core.health import RecentErrors
from tcccd.core.requests import RequestTable
from tcccd.core.roster import Roster
from tcccd.governor.switch import SwitchResult
from tcccd.governor.telemetry_hook import ProfileGovernor
from tcccd.ports import ConfigSource, JournalSource
from tcccd.tak import requests as tak_requests
from tcccd.tak.service import TakService
from tcccd.wire.messages import CARD_TYPES, TAK_TYPES, ProfileSet, TranscriptsSince
from tcccd.wire.protocol import Message
from tcccd.wire.replies import Pong, ProfileReply, TranscriptsReply
from tcccd.wire.status import StatusReport

Respond = Callable[[Message], None]


class Section(Protocol):
    """A part that owns a section of the status report (its counters, its state)."""

    def report(self) -> dict[str, Any] | None: ...


SECTIONS = ("counters", "sources", "memory", "wyoming", "card", "tak")


class LocalRequests:
    """`sections` are the parts that own a section of the report (SECTIONS), each read at report time."""

    def __init__(self, config: ConfigSource, roster: Roster, switcher: ProfileGovernor, requests: RequestTable,
                 journal: JournalSource, errors: RecentErrors, admission: Admission, sections: dict[str, Section],
                 card: CardRequests, tak: TakService) -> None:
        self.config = config
        self.roster = roster
        self.switcher = switcher
        self.requests = requests
        self.journal = journal
        self.errors = errors
        self.admission = admission
        self.sections = sections
        self.card = card
        self.tak = tak
        self.started_at = time.time()

    def answer(self, message: Message, respond: Respond) -> None:
        """Reply to a local request; profile.set replies once every worker has applied (or refused) it."""
        if message.type == "ping":
            respond(Pong().answer(message))
        elif message.type == "status":
            respond(self.report().answer(message))
        elif message.type == "profile.get":
            respond(ProfileReply.from_data(self.switcher.info()).answer(message))
        elif message.type == "transcripts.since":
            respond(self._transcripts_since(message))
        elif message.type in TAK_TYPES:
            respond(tak_requests.answer(self.tak, message))
        elif message.type in CARD_TYPES:
            respond(self.card.answer(message))
        else:  # profile.set, its data checked at the edge (tcccd.wire.messages)
            ask = ProfileSet.model_validate(message.data)
            self.switcher.switch(ask.name, ask.reason, lambda result: respond(_switch_reply(message, result)),
                                 for_s=ask.for_s)

    def _transcripts_since(self, message: Message) -> Message:
        journal = self.journal.journal()
        if journal is None:
            return message.error("no_route", "the transcript journal is disabled (transcripts.enabled: false)")
        ask = TranscriptsSince.model_validate(message.data)
        entries = journal.since(float(ask.since_ts), ask.after_seq, ask.limit)
        return TranscriptsReply.answer_with(message, [e.to_dict() for e in entries], ask.limit)

    def summary_line(self) -> str:
        return health.summary_line(self.report())

    def report(self) -> StatusReport:
        stages = []
        for handle in self.roster.handles():
            for stage in handle.stages:
                stages.append({
                    "name": stage.config.name, "plugin": stage.config.plugin, "worker": handle.name,
                    "state": health.stage_state(handle.state, stage.health), "pid": handle.info.get("pid"),
                    "restarts": handle.restarts, "queue_depth": stage.pending, "max_queue": stage.config.max_queue,
                    "dropped_audio_chunks": stage.dropped_audio_chunks, "busy_rejections": stage.busy_rejections,
                    "last_error": handle.last_error or stage.last_error or stage.health.last_error,
                    "latency": stage.health.latency.to_data() if stage.health.latency else {},
                    "rss_bytes": handle.info.get("rss_bytes"), "peak_rss_bytes": handle.info.get("peak_rss_bytes"),
                    "plugin_health": stage.health.to_data(),
                })
        daemon_rss = psutil.Process().memory_info().rss
        worker_rss = sum(h.info.get("rss_bytes") or 0 for h in self.roster.handles() if h.alive)
        config = self.config.current()
        journal = self.journal.journal()
        report = {
            "version": __version__, "pid": os.getpid(), "uptime_s": time.time() - self.started_at,
            "profile": self.switcher.current, "stages": stages, "requests_in_flight": len(self.requests),
            "memory": {"daemon_rss_bytes": daemon_rss, "total_rss_bytes": daemon_rss + worker_rss,
                       **(self.sections["memory"].report() or {})},
            "endpoints": {"client": config.daemon.client_endpoint, "events": config.daemon.events_endpoint},
            "counters": self.sections["counters"].report(),
            "last_errors": list(self.errors.entries),
            "transcripts": journal.health() if journal else None,
            "sources": self.sections["sources"].report(),
            "wyoming": self.sections["wyoming"].report(),
            "card": self.sections["card"].report(),
            "tak": self.sections["tak"].report(),
            **self.switcher.report(),  # telemetry readings and the power mode
        }
        report["state"] = health.overall_state([s["state"] for s in stages], self.admission.stopping())
        return StatusReport.from_data(report)


def _switch_reply(message: Message, result: SwitchResult) -> Message:
    if result.state == "refused":
        return message.error(result.code or "bad_profile", result.message)
    return ProfileReply.from_data(result.profile).answer(message)
