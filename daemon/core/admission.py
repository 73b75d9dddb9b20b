"""Whether a new request may be accepted, and when not, the error code and text that say why.

Checked before a request is opened, in this order: the daemon is not
stopping; a route serves the type; every stage of the route can take it (not
disabled, not failed, not starting); the memory capper is not refusing; no
queue of the route is full; no cap on open requests or streams is reached.
The text of each refusal says what to do about it.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from tcccd.config import Config
from tcccd.core.requests import RequestTable
from tcccd.core.roster import Roster
from tcccd.ports import ConfigSource
from tcccd.wire.protocol import Message
from tcccd.wire.states import ROUTABLE, WorkerState

Refusal = tuple[str, str, dict[str, Any]]  # code, text, extra data for the error reply


class MemoryAdmission(Protocol):
    """tcccd.governor.memory_hook.MemoryHook: while the capper refuses new work, the refusal."""

    def admission(self) -> Refusal | None: ...

STAGE_HINTS = {"transcribe": "whisper", "stream": "whisper", "speak": "piper", "speak.tokens": "snac",
               "capture.mute": "capture", "capture.unmute": "capture"}


class Admission:
    def __init__(self, config: ConfigSource, roster: Roster, requests: RequestTable, memory: MemoryAdmission) -> None:
        self.config = config
        self.roster = roster
        self.requests = requests
        self.memory = memory
        self.accepting = True

    def stop_accepting(self) -> None:
        """The daemon is draining: every new request is refused with `shutting_down`."""
        self.accepting = False

    def stopping(self) -> bool:
        return not self.accepting

    def refusal(self, client: bytes, message: Message, route: list[str] | None) -> Refusal | None:
        if not self.accepting:
            return "shutting_down", "tcccd is stopping and takes no new requests", {}
        if route is None:
            return "no_route", no_route_text(route_key(message), self.config.current()), {}
        for name in route:  # every stage of the chain must be able to take it, not only the first
            problem = self.stage_refusal(name)
            if problem:
                return problem
        refusal = self.memory.admission()
        if refusal is not None:
            return refusal
        full = [name for name in route if self.roster.queue_full(name)]
        if full:
            return "busy", self.roster.refuse_busy(full[0]), {}
        cap = self.requests.cap_refusal(client, streaming=not message.final)
        return ("busy", cap, {}) if cap else None

    def stage_refusal(self, name: str) -> Refusal | None:
        if not self.roster.has_stage(name):
            return "stage_disabled", f"stage {name!r} is disabled; set enabled: true for it in the config", {}
        handle = self.roster.worker_of(name)
        if handle.state == WorkerState.FAILED:
            wait_s = max(0.0, handle.next_start_at - time.monotonic())
            plugin = next(s.config.plugin for s in handle.stages if s.config.name == name)
            return "stage_failed", (f"stage {name!r} (plugin {plugin}) has failed: "
                                    f"{handle.last_error}; next retry in {wait_s:.0f} s, or fix the cause and "
                                    f"reload tcccd"), {}
        if handle.state not in ROUTABLE:  # an unloaded one loads on demand
            return "unavailable", f"stage {name!r} is {handle.state}; retry in a few seconds", {}
        return None


def route_key(message: Message) -> str:
    """The routes entry a request takes: `speak` with data.play true goes through the stage that plays it."""
    return "speak.play" if message.type == "speak" and message.data.get("play") is True else message.type


def no_route_text(kind: str, config: Config) -> str:
    known = ", ".join(sorted(config.routes)) or "none"
    text = f"no stage handles {kind!r} requests (configured: {known})"
    if kind in STAGE_HINTS:
        text += (f"; enable it with a pipeline stage using plugin {STAGE_HINTS[kind]!r} and "
                 f"routes: {{{kind}: [that stage]}} in the config")
    return text
