"""The health verdict: what the daemon says about itself in one word and one line, and the alerts it raises.

`RecentErrors` keeps the last errors every part notes, for the report;
`overall_state` is the one word an operator acts on (tcccd.cli.status_screen
turns it into `tcccd status`'s exit code); `summary_line` is what systemd's
STATUS= and the top of the screen show. `Alerts` publishes what an operator must
know now and notes it among the recent errors; the stage watches turn what a
plugin reports in its health (talk-overs, a degraded stage) into alerts.
"""

from __future__ import annotations

import collections
import time
from typing import Any

import structlog

from tcccd.ports import AlertSink, Publisher, StageHealth
from tcccd.wire.alerts import Alert, StageDegraded, StageRecovered, TalkOver
from tcccd.wire.protocol import Message
from tcccd.wire.states import HEALTHY, WorkerState
from tcccd.wire.status import CaptureHealth, PluginHealth, StatusReport

TALK_OVER_TEXT = ("the medic spoke over the kit's read-back ({stage}): the read-back was stopped and the first "
                  "words may be missing: check the last transcript, and have the medic repeat")


def stage_state(worker_state: str, stage_health: PluginHealth) -> str:
    """A stage's state: its worker's, unless the plugin itself reports worse."""
    reported = stage_health.state
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
    """Implements tcccd.ports.AlertSink: an alert is published on the `alert` topic and, when it is a problem,
    noted among the recent errors for status."""

    def __init__(self, events: Publisher, errors: RecentErrors) -> None:
        self.events = events
        self.errors = errors

    def alert(self, alert: Alert, request_id: str = "-") -> None:
        self.errors.note(request_id, alert.message)
        self.tell(alert)

    def tell(self, alert: Alert) -> None:
        self.events.publish("alert", Message.event(alert))


class StageWatch:
    """A main-loop hook over every stage's last reported health that tells what is new in it: talk-overs, a stage
    that reports itself degraded. One method to override: `saw`."""

    interval_s = 0.25

    def __init__(self, stages: StageHealth, alerts: AlertSink) -> None:
        self.stages = stages
        self.alerts = alerts
        self.told: dict[str, Any] = {}  # stage -> what was last told about it (a count, a reason)
        self.log = structlog.get_logger()

    def tick(self, now: float) -> None:
        for name, health in self.stages.stage_health().items():
            self.saw(name, health)

    def saw(self, stage: str, health: PluginHealth) -> None:
        """One stage's health as last reported; tell what is new."""
        raise NotImplementedError


class TalkOverWatch(StageWatch):
    """The medic spoke over the kit's read-back, so words the gate could not save are not lost silently.

    Under the echo gate the capture stage notices the medic talk over a read-back (tcccd.plugins.capture.echo)
    and stops it; what the medic said while the gate was closed is not transcribed. The stage counts each
    talk-over in its health (`talk_overs`; a restarted worker counts from 0 again): one alert for each new one,
    with what to do about it.
    """

    def saw(self, stage: str, health: PluginHealth) -> None:
        count = health.talk_overs if isinstance(health, CaptureHealth) else None
        if count is None:
            return
        told = self.told.get(stage, 0)
        self.told[stage] = count
        for _ in range(count - told):
            self.log.warning("medic talked over a read-back", stage=stage)
            self.alerts.alert(TalkOver(worker=stage, message=TALK_OVER_TEXT.format(stage=stage)))


class DegradedWatch(StageWatch):
    """A stage that says it does not work as it should (a microphone that does not hear): its plugin reports
    `state: degraded` with a `degraded_reason`, which already makes status degraded and `tcccd status` exit 1;
    this also tells it as an alert (and a recent error) when it happens, and when the stage is well again, so an
    operator who only watches the events socket hears of it too. `told`: the reason, until it recovers."""

    def saw(self, stage: str, health: PluginHealth) -> None:
        reason = health.degraded_reason if health.state == WorkerState.DEGRADED else None
        if reason and stage not in self.told:
            self.told[stage] = str(reason)
            text = f"stage {stage} is degraded: {reason}"
            self.log.warning(text, stage=stage)
            self.alerts.alert(StageDegraded(worker=stage, reason=str(reason), message=text))
        elif not reason and stage in self.told:
            was = self.told.pop(stage)
            text = f"stage {stage} works again (it was degraded: {was})"
            self.log.info(text, stage=stage)
            self.alerts.tell(StageRecovered(worker=stage, reason=was, message=text))
