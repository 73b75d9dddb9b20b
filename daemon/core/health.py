"""The health verdict: what the daemon says about itself in one word and one line.

`RecentErrors` keeps the last errors every part notes, for the report;
`overall_state` is the one word an operator acts on (tcccd.cli.status_screen
turns it into `tcccd status`'s exit code); `summary_line` is what systemd's
STATUS= and the top of the screen show.
"""

from __future__ import annotations

import collections
import time
from typing import Any

from tcccd.wire.states import HEALTHY, WorkerState
from tcccd.wire.status import StatusReport


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
