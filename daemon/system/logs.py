"""structlog set-up shared by the daemon and its workers.

Under systemd (stderr is the journal stream) each event goes to journald with
its fields (REQUEST_ID, PLUGIN, PROFILE...) as structured data; otherwise JSON
lines when stderr is not a terminal, readable console output on a terminal. Request ids travel in contextvars, so
every line logged while a message is handled carries its `request_id`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from tcccd.system.journald import journald_processor


def configure(level: str = "info", fmt: str = "auto", **static: Any) -> None:
    """Configure structlog; `static` fields (worker, pid) go on every line."""
    use_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if static:
        processors.append(lambda _logger, _name, event: {**static, **event})
    processors.append(structlog.processors.format_exc_info)
    renderer = journald_processor() if fmt != "console" else None
    if renderer is None:
        renderer = structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer()
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


class Once:
    """Which problems were already told: a microphone repeats a routing problem fifteen times a second, a broken
    worker the same unreadable message, and the log and status should say each once (until `forget`)."""

    def __init__(self) -> None:
        self._told: set[object] = set()

    def first(self, key: object) -> bool:
        """True the first time `key` is seen (then tell it), False after."""
        if key in self._told:
            return False
        self._told.add(key)
        return True

    def forget(self) -> None:
        """The problems are over: the next one is news again."""
        self._told.clear()
