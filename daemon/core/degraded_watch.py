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

from typing import Any

from tcccd.core.stage_watch import StageWatch
from tcccd.wire.protocol import Message
from tcccd.wire.states import WorkerState


class DegradedWatch(StageWatch):
    """`told`: the reason told when each stage became degraded, until it recovers."""

    def saw(self, stage: str, health: dict[str, Any]) -> None:
        reason = health.get("degraded_reason") if health.get("state") == WorkerState.DEGRADED else None
        if reason and stage not in self.told:
            self.told[stage] = str(reason)
            self._tell(stage, "stage_degraded", f"stage {stage} is degraded: {reason}", str(reason))
        elif not reason and stage in self.told:
            was = self.told.pop(stage)
            self._tell(stage, "stage_recovered", f"stage {stage} works again (it was degraded: {was})", was)

    def _tell(self, stage: str, kind: str, text: str, reason: str) -> None:
        self.log.warning(text, stage=stage, kind=kind)
        if kind == "stage_degraded":
            self.on_error("-", text)
        self.publish("alert", Message("alert", data={"kind": kind, "message": text, "worker": stage,
                                                     "reason": reason}))
