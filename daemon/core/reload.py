"""What a config builds and what a reload may change: stage parameters, the journal, the Wyoming door.

The daemon builds these parts from a config at start and again on SIGHUP, when
the section that configures them changed: a new `transcripts:` section reopens
the journal (enabled, file, retention), a new `wyoming:` section closes the door,
opens it, or opens it elsewhere. The `daemon:` section (endpoints, directories,
limits the sockets were bound with) is kept until a restart, and which of its keys
changed is said in the log and in status' recent errors.
"""

from __future__ import annotations

from typing import Any

import structlog
import zmq

from tcccd import config as cfg
from tcccd.ports import ConfigSource
from tcccd.record.journal import TranscriptJournal
from tcccd.wyoming_door.server import WyomingDoor, WyomingDoorError

DOOR_REPLY_GRACE_S = 5.0


def stage_params(config: cfg.Config, profile: cfg.ProfileFile) -> dict[str, dict[str, Any]]:
    """Every enabled stage's parameters with the profile's overlay laid over them."""
    return {s.name: cfg.stage_params(config, s, profile) for s in config.enabled_stages}


def open_journal(config: cfg.Config) -> TranscriptJournal | None:
    """The transcript journal in the state directory, or None when `transcripts.enabled` is false."""
    if not config.transcripts.enabled:
        return None
    return TranscriptJournal.open(config.daemon.state_dir, config.transcripts)


class DoorSlot:
    """The Wyoming door in use, none while `wyoming.enabled` is false; `reopen` after a changed `wyoming:`
    section. It is also the door's view of the config in force (tcccd.wyoming_door.server.StreamRoute)."""

    def __init__(self, config: ConfigSource, ctx: zmq.Context) -> None:
        self.config = config
        self.ctx = ctx
        self.log = structlog.get_logger()
        self.door = self._open()

    def _open(self) -> WyomingDoor | None:
        """Not yet listening: `start` opens it."""
        config = self.config.current()
        if not config.wyoming.enabled:
            return None
        return WyomingDoor(config.wyoming, self.ctx, config.daemon.default_deadline_s + DOOR_REPLY_GRACE_S, self)

    def start(self) -> str | None:
        """Listen; the reason when the door cannot open (ZeroMQ clients are still served)."""
        if self.door is None:
            return None
        try:
            self.door.start()
        except WyomingDoorError as exc:
            self.log.error("wyoming door not open", error=str(exc))
            return str(exc)
        return None

    def reopen(self) -> str | None:
        self.stop()
        self.door = self._open()
        return self.start()

    def stop(self) -> bool:
        """Closed; False when its thread did not end (it still holds sockets)."""
        return self.door is None or self.door.stop()

    def streams_through_whisper(self) -> bool:
        return streams_through_whisper(self.config.current())

    def report(self) -> dict[str, Any] | None:
        return self.door.report() if self.door is not None else None


def streams_through_whisper(config: cfg.Config) -> bool:
    """Whether a tcccd `stream` reaches the whisper stage, whose utterances the door sends as transcript chunks."""
    plugins = {stage.name: stage.plugin for stage in config.pipeline if stage.enabled}
    return any(plugins.get(name) == "whisper" for name in config.routes.get("stream", []))


def keep_daemon_section(running: cfg.Config, new: cfg.Config) -> tuple[cfg.Config, list[str]]:
    """`new` with the running `daemon:` section, and the keys of it that the new file changed."""
    before, after = running.daemon.model_dump(), new.daemon.model_dump()
    changed = sorted(key for key in after if after[key] != before[key])
    return (new.model_copy(update={"daemon": running.daemon}) if changed else new), changed
