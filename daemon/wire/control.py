"""The messages between the daemon and its workers, one small model per type, read in one place on each side.

The worker's control socket carries what it says about itself (`ready` with its
health snapshot, `setup_failed`, `profile_applied`, `released`) and what the
daemon asks of it (`profile`, `release`, `finish_streams`, `shutdown`); its
heartbeat socket carries `ping`/`pong` and `cancel`. The producer builds one of
these models and sends `model.message()`; the receiver calls `read_control`,
which names the type and the field that is wrong when a message breaks the
contract (a worker from another version, a garbled frame) instead of raising
deep inside a handler.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tcccd.wire.protocol import Message
from tcccd.wire.validation import format_validation_error


class ControlInvalid(ValueError):
    """A control message of an unknown type, or whose data breaks its type's model."""


class Control(BaseModel):
    """One control message type's `data`; `TYPE` is the message type it travels as."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    TYPE: ClassVar[str] = ""

    def message(self) -> Message:
        return Message(self.TYPE, data=self.model_dump(mode="json"))


class Snapshot(Control):
    """A worker's health: its process and each stage's plugin health, as the heartbeat thread last saw it."""

    pid: int
    rss_bytes: int | None = None
    peak_rss_bytes: int | None = None
    gpu_bytes: int | None = None
    stages: dict[str, dict[str, Any]] = Field(default_factory=dict, description="stage -> Plugin.health()")


class Ready(Snapshot):
    """Worker -> daemon: every stage is set up and warmed."""

    TYPE: ClassVar[str] = "ready"


class Pong(Snapshot):
    """Worker -> daemon (heartbeat): alive, with the snapshot and what the main thread is busy with."""

    TYPE: ClassVar[str] = "pong"
    busy: dict[str, Any] | None = Field(None, description="stage, request_id, busy_s, overdue_s; null when idle")


class SetupFailed(Control):
    """Worker -> daemon: a stage could not set up; the worker exits next."""

    TYPE: ClassVar[str] = "setup_failed"
    error: str


class ProfileApplied(Control):
    """Worker -> daemon: the answer to `profile`: applied to every stage (no errors) or to none."""

    TYPE: ClassVar[str] = "profile_applied"
    profile: str
    txn: str | None = None
    errors: dict[str, str] = Field(default_factory=dict, description="stage -> why it refused")


class Released(Control):
    """Worker -> daemon: the answer to `release`: what the plugins and the allocator gave back."""

    TYPE: ClassVar[str] = "released"
    rss_before_bytes: int
    rss_after_bytes: int
    freed_bytes: int
    malloc_trim: bool
    errors: dict[str, str] = Field(default_factory=dict, description="stage -> why its release failed")


class ApplyProfile(Control):
    """Daemon -> worker: take these parameters for these stages, all or none (a switch or its rollback)."""

    TYPE: ClassVar[str] = "profile"
    profile: str
    params: dict[str, dict[str, Any]]
    txn: str


class Release(Control):
    """Daemon -> worker: the memory capper asks for memory back (between requests)."""

    TYPE: ClassVar[str] = "release"


class FinishStreams(Control):
    """Daemon -> worker: the daemon is stopping; each source sends what it holds and closes its stream."""

    TYPE: ClassVar[str] = "finish_streams"


class Shutdown(Control):
    """Daemon -> worker: tear down and exit."""

    TYPE: ClassVar[str] = "shutdown"


class Ping(Control):
    """Daemon -> worker (heartbeat): answer with `pong`."""

    TYPE: ClassVar[str] = "ping"


class Cancel(Control):
    """Daemon -> worker (heartbeat): a request ended early; its plugin may stop."""

    TYPE: ClassVar[str] = "cancel"
    request_id: str


CONTROL: dict[str, type[Control]] = {model.TYPE: model for model in (
    Ready, Pong, SetupFailed, ProfileApplied, Released, ApplyProfile, Release, FinishStreams, Shutdown, Ping,
    Cancel)}


def read_control(message: Message) -> Control:
    """The typed control message; ControlInvalid saying what is wrong for an unknown type or bad data."""
    model = CONTROL.get(message.type)
    if model is None:
        raise ControlInvalid(f"unknown control message type {message.type!r} (known: {', '.join(sorted(CONTROL))})")
    try:
        return model.model_validate(message.data)
    except ValidationError as exc:
        raise ControlInvalid(f"{message.type!r}: {'; '.join(format_validation_error(model, exc))}") from None


def read_pong(message: Message) -> Pong:
    """A heartbeat's answer; ControlInvalid when it is anything else or breaks the model."""
    pong = read_control(message)
    if not isinstance(pong, Pong):
        raise ControlInvalid(f"expected 'pong' on the heartbeat socket, got {message.type!r}")
    return pong
