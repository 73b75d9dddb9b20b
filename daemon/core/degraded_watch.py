"""Telling the tablet when a stage says it does not work as it should (a microphone that does not hear).

A plugin that reports `state: degraded` with a `degraded_reason` in its health
(the capture stage: no device, a stream that delivers nothing, one that keeps
stopping) makes its stage degraded in status and `tcccd status` exit 1
(tcccd.core.health). This watch, on the main loop, also publishes an `alert`
(`kind: stage_degraded`, with the reason) when a stage becomes degraded, notes it
in status' recent errors, and publishes `kind: stage_recovered` when it is well again,
so an operator who only watches the events socket hears of it too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from tcccd.wire.protocol import Message
from tcccd.wire.states import WorkerState


class DegradedWatch:
    interval_s = 0.25

    def __init__(self, stages: Callable[[], dict[str, Any]], publish: Callable[[str, Message], None],
                 on_error: Callable[[str, str], None]) -> None:
        self.stages = stages
        self.publish = publish
        self.on_error = on_error
        self.degraded: dict[str, str] = {}  # stage -> the reason told when it became degraded
        self.log = structlog.get_logger()

    def tick(self, now: float) -> None:
        for name, stage in self.stages().items():
            health = getattr(stage, "health", None) or {}
            reason = health.get("degraded_reason") if health.get("state") == WorkerState.DEGRADED else None
            if reason and name not in self.degraded:
                self.degraded[name] = str(reason)
                self._tell(name, "stage_degraded", f"stage {name} is degraded: {reason}", str(reason))
            elif not reason and name in self.degraded:
                was = self.degraded.pop(name)
                self._tell(name, "stage_recovered", f"stage {name} works again (it was degraded: {was})", was)

    def _tell(self, stage: str, kind: str, text: str, reason: str) -> None:
        self.log.warning(text, stage=stage, kind=kind)
        if kind == "stage_degraded":
            self.on_error("-", text)
        self.publish("alert", Message("alert", data={"kind": kind, "message": text, "worker": stage,
                                                     "reason": reason}))
