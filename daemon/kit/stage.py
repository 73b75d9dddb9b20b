"""One plugin instance and the rules every stage obeys, whoever drives it.

The worker process and the test harness both drive plugins through `Stage`, so
a plugin tested with `tcccd.kit.testing` is held to the same contract as in the
daemon: a bad request yields an error reply instead of killing the stage, and
every input that ends a request gets exactly one final reply.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import structlog
from pydantic import ValidationError

from tcccd.kit import registry
from tcccd.kit.plugin import CancelScope, LatencyWindow, Plugin, PluginContext, PluginError, elapsed_ms
from tcccd.wire.errors import ERROR_CODES
from tcccd.wire.protocol import Message
from tcccd.wire.states import WorkerState
from tcccd.wire.validation import format_validation_error


class Stage:
    def __init__(self, name: str, plugin_ref: str, params: dict[str, Any], *, cache_dir: Path,
                 state_dir: Path, profile: str = "field") -> None:
        self.name = name
        self.plugin_cls: type[Plugin] = registry.load(plugin_ref)
        self.state = WorkerState.STARTING
        self.last_error: str | None = None
        self.errors = 0
        self.latency = LatencyWindow()
        log = structlog.get_logger().bind(stage=name, plugin=self.plugin_cls.name)
        context = PluginContext(stage=name, cache_dir=cache_dir, state_dir=state_dir, profile=profile, log=log)
        self.plugin = self.plugin_cls(self.plugin_cls.validate_params(params), context)
        self.log = log

    def start(self) -> None:
        """Set up and warm up; exceptions propagate so the worker can report and exit."""
        t0 = time.perf_counter()
        self.plugin.setup()
        self.plugin.warmup()
        self.state = WorkerState.READY
        self.log.info("stage ready", setup_ms=round(elapsed_ms(t0), 1))

    def handle(self, message: Message, scope: CancelScope | None = None) -> Iterator[Message]:
        """The plugin's outputs for one input, with the stage contract enforced.

        `scope` is what the plugin's context.check_cancelled() reads while this input is processed. The request's
        log context is bound only while the plugin computes, never across a yield: what the worker does between
        two outputs (control messages, another stage's poll) is not logged as this request's.
        """
        t0 = time.perf_counter()
        outputs = self._outputs(message)
        self.plugin.context.scope = scope
        try:
            while True:
                with structlog.contextvars.bound_contextvars(request_id=message.id, stage=self.name):
                    out = next(outputs, None)
                if out is None:
                    break
                yield out
        finally:
            self.plugin.context.scope = None
        self.latency.add(elapsed_ms(t0))

    def _outputs(self, message: Message) -> Iterator[Message]:
        final_sent = False
        try:
            for out in self.plugin.process(message):
                if final_sent:
                    self.log.warning("output after the final reply dropped", type=out.type)
                    continue
                final_sent = out.final
                yield replace(out, id=message.id, stage=self.name)
        except PluginError as exc:
            self._note_error(str(exc))
            final_sent = True
            yield replace(_plugin_error(message, exc), stage=self.name)
        except Exception as exc:  # noqa: BLE001 - one bad request must not take the stage down
            text = f"{self.plugin_cls.name} failed on this request: {type(exc).__name__}: {exc}"
            self._note_error(text)
            self.log.error("plugin raised", exc_info=True, traceback=traceback.format_exc(limit=8))
            final_sent = True
            yield replace(message.error("plugin_error", text), stage=self.name)
        if message.final and not final_sent:
            text = f"{self.plugin_cls.name} returned no final reply for this request"
            self._note_error(text)
            yield replace(message.error("plugin_error", text), stage=self.name)

    def poll(self) -> Iterator[Message]:
        """A source plugin's unsolicited messages, stamped with this stage; a failing poll is logged, not fatal."""
        with structlog.contextvars.bound_contextvars(stage=self.name):
            try:
                for out in self.plugin.poll():
                    yield replace(out, stage=self.name)
            except Exception as exc:  # noqa: BLE001 - a broken source must not take the worker down
                self._note_error(f"{self.plugin_cls.name} poll failed: {type(exc).__name__}: {exc}")
                self.log.error("plugin poll raised", exc_info=True)

    def finish_streams(self) -> None:
        """A stop: the source sends what it holds and closes its streams (Plugin.finish_streams)."""
        with structlog.contextvars.bound_contextvars(stage=self.name):
            try:
                self.plugin.finish_streams()
            except Exception as exc:  # noqa: BLE001 - the daemon then closes the stream itself
                self._note_error(f"{self.plugin_cls.name} finish_streams failed: {type(exc).__name__}: {exc}")
                self.log.error("plugin finish_streams raised", exc_info=True)

    def apply_profile(self, params: dict[str, Any], profile: str) -> str | None:
        """Switch parameters; returns an error text instead of raising, with the old parameters back in place.

        A plugin may refuse at apply time (a model file the new parameters name is missing): the stage then
        keeps serving with what it had, and the daemon rolls the switch back everywhere.
        """
        try:
            validated = self.plugin_cls.validate_params(params)
        except ValidationError as exc:
            return "; ".join(format_validation_error(self.plugin_cls.Params, exc, f"{self.name}.params"))
        old_params, old_profile = self.plugin.params, self.plugin.context.profile
        try:
            self.plugin.context.profile = profile
            self.plugin.apply_profile(validated)
        except Exception as exc:  # noqa: BLE001 - a refused profile must not take the stage down
            self.log.error("profile refused by the plugin", exc_info=True)
            self.plugin.context.profile = old_profile
            with contextlib.suppress(Exception):
                self.plugin.apply_profile(old_params)
            return f"{self.name} ({self.plugin_cls.name}) refused profile {profile!r}: {type(exc).__name__}: {exc}"
        return None

    def _note_error(self, text: str) -> None:
        self.errors += 1
        self.last_error = text

    def health(self) -> dict[str, Any]:
        try:
            extra = self.plugin.health()
        except Exception as exc:  # noqa: BLE001 - a broken health() must not break the heartbeat
            extra = {"health_error": str(exc)}
        return {"state": self.state, "plugin": self.plugin_cls.name, "last_error": self.last_error,
                "errors": self.errors, "latency": self.latency.percentiles(), **extra}

    def stop(self) -> None:
        self.state = WorkerState.STOPPED
        self.plugin.teardown()


def _plugin_error(message: Message, exc: PluginError) -> Message:
    """The plugin's error under its code; a code tcccd does not document reaches clients as `plugin_error`."""
    if exc.code in ERROR_CODES:
        return message.error(exc.code, str(exc))
    return message.error("plugin_error", f"{exc} (the plugin's own code {exc.code!r} is not a documented one)")
