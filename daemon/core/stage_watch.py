"""A main-loop hook that reads every stage's last reported health and tells what is new in it.

The supervisor keeps each stage's health as its worker last reported it; a watch
compares it with what it already told, and publishes an `alert` and notes a recent
error for what is new: talk-overs (tcccd.core.talk_over), a stage that reports itself
degraded (tcccd.core.degraded_watch). One method to override: `saw`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from tcccd.wire.protocol import Message


class StageWatch:
    interval_s = 0.25

    def __init__(self, stages: Callable[[], dict[str, Any]], publish: Callable[[str, Message], None],
                 on_error: Callable[[str, str], None]) -> None:
        self.stages = stages
        self.publish = publish
        self.on_error = on_error
        self.told: dict[str, Any] = {}  # stage -> what was last told about it (a count, a reason)
        self.log = structlog.get_logger()

    def tick(self, now: float) -> None:
        for name, stage in self.stages().items():
            self.saw(name, getattr(stage, "health", None) or {})

    def saw(self, stage: str, health: dict[str, Any]) -> None:
        """One stage's health as last reported; tell what is new."""
        raise NotImplementedError
