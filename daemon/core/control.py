"""Every control message a worker sends, read in one place.

A worker says on its control socket that it is `ready` (or that set-up
failed), that it `profile_applied` a switch, and what it `released` for the
memory capper (tcccd.wire.control: one model per type). Each is read here and
handed, typed, to the part it concerns; a message from a replaced worker
generation is ignored, and an unreadable or unknown one is logged (once per
worker and problem) instead of raising.
"""

from __future__ import annotations

from typing import Protocol

import structlog

from tcccd.core.roster import Roster
from tcccd.core.workers import WorkerHandle
from tcccd.system.logs import Once
from tcccd.wire.control import ControlInvalid, ProfileApplied, Ready, Released, SetupFailed, read_control
from tcccd.wire.protocol import Message, ProtocolError


class Readiness(Protocol):
    """tcccd.core.supervisor.Supervisor."""

    def on_ready(self, handle: WorkerHandle, ready: Ready) -> None: ...

    def on_setup_failed(self, handle: WorkerHandle, error: str) -> None: ...


class SwitchAnswers(Protocol):
    """tcccd.governor.switch.ProfileSwitcher."""

    def on_applied(self, handle: WorkerHandle, applied: ProfileApplied) -> None: ...


class ReleaseAnswers(Protocol):
    """tcccd.governor.memory_hook.MemoryHook."""

    def on_released(self, handle: WorkerHandle, released: Released) -> None: ...


class ControlRouter:
    def __init__(self, roster: Roster, readiness: Readiness, switches: SwitchAnswers,
                 releases: ReleaseAnswers) -> None:
        self.roster = roster
        self.readiness = readiness
        self.switches = switches
        self.releases = releases
        self.log = structlog.get_logger()
        self.told = Once()

    def on_frames(self, frames: list[bytes]) -> None:
        handle = self.roster.by_identity(frames[0])
        if handle is None:
            return  # a message from a worker generation that has since been replaced
        try:
            control = read_control(Message.from_frames(frames[1:]))
        except (ProtocolError, ControlInvalid) as exc:
            self._note_once(handle, str(exc))
            return
        if isinstance(control, Ready):
            self.readiness.on_ready(handle, control)
        elif isinstance(control, SetupFailed):
            self.readiness.on_setup_failed(handle, control.error)
        elif isinstance(control, ProfileApplied):
            self.switches.on_applied(handle, control)
        elif isinstance(control, Released):
            self.releases.on_released(handle, control)
        else:
            self._note_once(handle, f"{control.TYPE!r} is not a message a worker sends")

    def _note_once(self, handle: WorkerHandle, problem: str) -> None:
        if self.told.first((handle.name, problem)):
            self.log.warning("unreadable control message from a worker", worker=handle.name, problem=problem)
