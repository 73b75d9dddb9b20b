"""The health verdict: what the daemon says about itself in one word and one line, and the alerts it raises.

`RecentErrors` keeps the last errors every part notes, for the report;
`overall_state` is the one word an operator acts on (tcccd.cli.status_screen
turns it into `tcccd status`'s exit code); `summary_line` is what systemd's
STATUS= and the top of the screen show. `Alerts` publishes what an operator must
know now and notes it among the recent errors; `TalkOverWatch` turns the capture
stage's talk-over count into alerts.
"""

from __future__ import annotations

import collections
import time
from typing import Any

import structlog

from tcccd.ports import AlertSink, Publisher, StageHealth
from tcccd.wire.alerts import Alert, TalkOver
from tcccd.wire.protocol import Message
from tcccd.wire.states import HEALTHY, WorkerState
from tcccd.wire.status import StatusReport

TALK_OVER_TEXT = ("the medic spoke over the kit's read-back ({stage}): the read-back was stopped and the first "
                  "words may be missing: check the last transcript, and have the medic repeat")


def stage_state(worker_state: str, stage_health: dict[str, Any]) -> str:
    """A stage's state: its worker's, unless the plugin itself reports worse."""
    reported = stage_health.get("state")
    if worker_state == WorkerState.READY and reported in (WorkerState.DEGRADED, WorkerState.FAILED):
        return reported
    return worker_state


def overall_state(stage_states: list[str], stopping: bool) -> str:
    if stopping:
        return "stopping"
    if WorkerState.STARTING in stage_states:
        return "starting"
    if all(s in HEALTHY for s in stage_states):  # unloaded: idle, loads on demand
        return "healthy"
    return "degraded"


def summary_line(report: StatusReport) -> str:
    """One line for systemd's STATUS= and the top of the table."""
    ready = sum(1 for s in report.stages if s.state == WorkerState.READY)
    line = f"{report.state}: profile {report.profile.name}, {ready}/{len(report.stages)} plugins ready"
    if report.last_errors:
        line += f"; last error: {report.last_errors[-1].message[:120]}"
    return line


class RecentErrors:
    """The last errors any part of the daemon noted (request failures, journal faults, source problems)."""

    def __init__(self, keep: int = 20) -> None:
        self.entries: collections.deque[dict[str, Any]] = collections.deque(maxlen=keep)

    def note(self, request_id: str, text: str) -> None:
        self.entries.append({"ts": time.time(), "request_id": request_id, "message": text})


class Alerts:
    """Implements tcccd.ports.AlertSink: an alert is published on the `alert` topic and noted for status."""

    def __init__(self, events: Publisher, errors: RecentErrors) -> None:
        self.events = events
        self.errors = errors

    def alert(self, alert: Alert, request_id: str = "-") -> None:
        self.errors.note(request_id, alert.message)
        self.events.publish("alert", Message.event(alert))


class TalkOverWatch:
    """Telling the tablet when the medic talked over the kit, so words the gate could not save are not lost
    silently.

    Under the echo gate the capture stage notices the medic talk over a read-back (tcccd.plugins.capture.echo)
    and stops it; what the medic said while the gate was closed is not transcribed. The stage counts each
    talk-over in its health (`talk_overs`); this watch, on the main loop, raises a TalkOver alert for each new
    one, with what to do about it.
    """

    interval_s = 0.25

    def __init__(self, stages: StageHealth, alerts: AlertSink) -> None:
        self.stages = stages
        self.alerts = alerts
        self.seen: dict[str, int] = {}  # stage -> talk-overs already told (a restarted worker counts from 0 again)
        self.log = structlog.get_logger()

    def tick(self, now: float) -> None:
        for name, health in self.stages.stage_health().items():
            count = health.get("talk_overs")
            if not isinstance(count, int):
                continue
            told = self.seen.get(name, 0)
            self.seen[name] = count
            for _ in range(count - told):
                self.log.warning("medic talked over a read-back", stage=name)
                self.alerts.alert(TalkOver(worker=name, message=TALK_OVER_TEXT.format(stage=name)))
