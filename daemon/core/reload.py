"""What a config builds and what a reload may change: stage parameters, the journal, the Wyoming door.

The daemon builds these parts from a config at start and again on SIGHUP, when
the section that configures them changed: a new `transcripts:` section reopens
the journal (enabled, file, retention), a new `wyoming:` section closes the door,
opens it, or opens it elsewhere. The `daemon:` section (endpoints, directories,
limits the sockets were bound with) is kept until a restart, and which of its keys
changed is said in the log and in status' recent errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import zmq

from tcccd import config as cfg
from tcccd.record.journal import TranscriptJournal
from tcccd.wyoming_door.server import WyomingDoor

DOOR_REPLY_GRACE_S = 5.0


def stage_params(config: cfg.Config, profile_name: str) -> dict[str, dict[str, Any]]:
    """Every enabled stage's parameters with the profile's overlay laid over them."""
    profile = cfg.load_profile(config, profile_name)
    return {s.name: cfg.stage_params(config, s, profile) for s in config.enabled_stages}


def open_journal(config: cfg.Config) -> TranscriptJournal | None:
    """The transcript journal in the state directory, or None when `transcripts.enabled` is false."""
    if not config.transcripts.enabled:
        return None
    return TranscriptJournal.open(config.daemon.state_dir, config.transcripts)


def open_door(config: cfg.Config, ctx: zmq.Context, current: Callable[[], cfg.Config]) -> WyomingDoor | None:
    """The Wyoming door when `wyoming.enabled` (not yet listening: the daemon starts it), else None.

    `current` is the config in force, read when a client asks whether transcripts stream."""
    if not config.wyoming.enabled:
        return None
    return WyomingDoor(config.wyoming, ctx, config.daemon.default_deadline_s + DOOR_REPLY_GRACE_S,
                       lambda: streams_through_whisper(current()))


def streams_through_whisper(config: cfg.Config) -> bool:
    """Whether a tcccd `stream` reaches the whisper stage, whose utterances the door sends as transcript chunks."""
    plugins = {stage.name: stage.plugin for stage in config.pipeline if stage.enabled}
    return any(plugins.get(name) == "whisper" for name in config.routes.get("stream", []))


def keep_daemon_section(running: cfg.Config, new: cfg.Config) -> tuple[cfg.Config, list[str]]:
    """`new` with the running `daemon:` section, and the keys of it that the new file changed."""
    before, after = running.daemon.model_dump(), new.daemon.model_dump()
    changed = sorted(key for key in after if after[key] != before[key])
    return (new.model_copy(update={"daemon": running.daemon}) if changed else new), changed
