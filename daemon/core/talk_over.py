"""Telling the tablet when the medic talked over the kit, so words the gate could not save are not lost silently.

Under the echo gate the capture stage notices the medic talk over a read-back
(tcccd.plugins.capture.echo) and stops it; what the medic said while the gate
was closed is not transcribed (with `talk_over: pass`, only what came before its
voice detector was sure). The stage counts each talk-over in its health (`talk_overs`);
this watch, on the main loop, publishes an `alert` (`kind: talk_over`) for each
new one, with what to do about it, and notes it in status' recent errors.
"""

from __future__ import annotations

from typing import Any

from tcccd.core.stage_watch import StageWatch
from tcccd.wire.protocol import Message

TEXT = ("the medic spoke over the kit's read-back ({stage}): the read-back was stopped and the first words may be "
        "missing: check the last transcript, and have the medic repeat")


class TalkOverWatch(StageWatch):
    """`told`: talk-overs already told per stage (a restarted worker counts from 0 again)."""

    def saw(self, stage: str, health: dict[str, Any]) -> None:
        count = health.get("talk_overs")
        if not isinstance(count, int):
            return
        told = self.told.get(stage, 0)
        self.told[stage] = count
        for _ in range(count - told):
            self._tell(stage)

    def _tell(self, stage: str) -> None:
        text = TEXT.format(stage=stage)
        self.log.warning("medic talked over a read-back", stage=stage)
        self.on_error("-", text)
        self.publish("alert", Message("alert", data={"kind": "talk_over", "message": text, "worker": stage}))
