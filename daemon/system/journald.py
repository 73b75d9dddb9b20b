"""Send structlog events to journald as structured entries, when the daemon runs under systemd.

Under systemd stderr already reaches the journal, but as flat text: an operator could not ask
`journalctl -u tcccd REQUEST_ID=...` or `PLUGIN=whisper`. The native protocol keeps every field, and PRIORITY
lets `journalctl -p warning` find problems. Outside systemd nothing changes: the processor is None and the
usual renderer stays in charge.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

import structlog

SYSLOG_IDENTIFIER = "tcccd"
PRIORITY_BY_LEVEL = {
    "critical": 2, "exception": 3, "error": 3, "warning": 4, "warn": 4, "notice": 5, "info": 6, "debug": 7,
}
DEFAULT_PRIORITY = 6
# Keys journald stamps itself or that become MESSAGE/PRIORITY.
CONSUMED_KEYS = {"event", "level", "timestamp", "exception"}
FIELD_NAME_MAX = 64

Processor = Callable[[Any, str, MutableMapping[str, Any]], Any]


def field_name(key: str) -> str:
    """A journal field name for a structlog key: upper case, [A-Z0-9_], not starting with '_' or a digit.

    journald drops fields with invalid names, and names starting with '_' are trusted fields only it may set.
    """
    name = re.sub(r"[^A-Z0-9_]", "_", key.upper()).lstrip("_")
    if not name or name[0].isdigit():
        name = "F_" + name
    return name[:FIELD_NAME_MAX]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value)


def journal_fields(event_dict: Mapping[str, Any]) -> dict[str, str]:
    """The journal entry for one event: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER and every other key upper-cased."""
    message = _text(event_dict.get("event", ""))
    if event_dict.get("exception"):
        message = f"{message}\n{_text(event_dict['exception'])}"
    level = _text(event_dict.get("level", "info")).lower()
    fields = {
        "MESSAGE": message,
        "PRIORITY": str(PRIORITY_BY_LEVEL.get(level, DEFAULT_PRIORITY)),
        "SYSLOG_IDENTIFIER": SYSLOG_IDENTIFIER,
    }
    for key, value in event_dict.items():
        if key in CONSUMED_KEYS:
            continue
        fields.setdefault(field_name(key), _text(value))
    return fields


def _stderr_is_journal_stream(env: Mapping[str, str]) -> bool:
    """JOURNAL_STREAM names the device:inode of the journal stream systemd connected to stderr.

    systemd.exec(5) advises checking it against stderr itself: a process whose stderr was redirected (a worker
    whose output the supervisor collects, a shell pipe) inherits the variable but not the stream.
    """
    try:
        device, inode = (int(part) for part in env.get("JOURNAL_STREAM", "").split(":"))
        stat = os.fstat(2)
    except (ValueError, OSError):
        return False
    return (stat.st_dev, stat.st_ino) == (device, inode)


class _JournaldProcessor:
    """The last processor in the chain: send the event to journald, then drop it so nothing prints it twice."""

    def __init__(self, sendv: Callable[..., Any]) -> None:
        self._sendv = sendv
        self._fallback = structlog.processors.JSONRenderer()

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> Any:
        event_dict = structlog.processors.format_exc_info(logger, method_name, event_dict)
        fields = journal_fields(event_dict)
        try:
            self._sendv(*(f"{key}={value}" for key, value in fields.items()))
        except (OSError, ValueError, TypeError):
            self._write_to_stderr(logger, method_name, event_dict)
        raise structlog.DropEvent

    def _write_to_stderr(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> None:
        """journald refused the entry: stderr still goes to the journal, as text, so the line is not lost."""
        try:
            line = self._fallback(logger, method_name, dict(event_dict))
        except (TypeError, ValueError):
            line = json.dumps({key: _text(value) for key, value in event_dict.items()})
        print(line, file=sys.stderr, flush=True)


def journald_processor(env: Mapping[str, str] | None = None) -> Processor | None:
    """A structlog processor (to be the LAST processor, instead of the renderer) that sends each event to journald
    with MESSAGE=event, PRIORITY from the level, and structured fields (REQUEST_ID, PLUGIN, STAGE, PROFILE, WORKER and
    any other key upper-cased, values stringified), then raises structlog.DropEvent. Returns None when not under
    systemd (env JOURNAL_STREAM unset or not this process's stderr) or systemd.journal is not importable."""
    source = os.environ if env is None else env
    if not _stderr_is_journal_stream(source):
        return None
    try:
        from systemd import journal
    except ImportError:
        return None
    return _JournaldProcessor(journal.sendv)
