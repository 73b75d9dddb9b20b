"""The one base class every tcccd plugin derives from.

A plugin overrides `process` (one message in, any number out) and, where it
loads a model, `setup` and `warmup`. Heavy imports (torch, onnxruntime) belong
inside `setup`, so that listing plugins or validating a config stays cheap and a
worker that needs no torch never imports it.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import structlog
from pydantic import BaseModel, ConfigDict

from tcccd.wire.protocol import Message


class PluginParams(BaseModel):
    """Base for a plugin's parameters: unknown keys are errors, not ignored."""

    model_config = ConfigDict(extra="forbid")


class PluginError(Exception):
    """An error a plugin reports for one request; `code` goes on the wire when it is one of tcccd's codes
    (tcccd.wire.errors.ERROR_CODES), any other reaches the client as `plugin_error` naming it."""

    def __init__(self, message: str, code: str = "bad_request") -> None:
        super().__init__(message)
        self.code = code


class RequestCancelled(PluginError):
    """Raised by PluginContext.check_cancelled: stop computing, nobody waits for this result any more."""


class CancelScope:
    """One request's cancellation, readable from the thread that computes it.

    The worker's main thread is inside `plugin.process` while a request runs, so the cancel arrives on the
    heartbeat thread, which sets the event; the deadline needs no message at all.
    """

    def __init__(self, request_id: str, deadline_at: float | None) -> None:
        self.request_id = request_id
        self.deadline_at = deadline_at
        self.reason = ""
        self._event = threading.Event()

    def cancel(self, reason: str) -> None:
        self.reason = reason
        self._event.set()

    def check(self) -> None:
        if self._event.is_set():
            raise RequestCancelled(f"request {self.request_id} was cancelled: {self.reason}", code="cancelled")
        if self.deadline_at is not None and time.monotonic() > self.deadline_at:
            raise RequestCancelled(f"request {self.request_id} passed its deadline", code="deadline_exceeded")


@dataclass
class PluginContext:
    """What the daemon gives a plugin: where to keep files, how to log, and whether to go on computing."""

    stage: str
    cache_dir: Path
    state_dir: Path
    profile: str = "field"
    log: Any = field(default_factory=structlog.get_logger)
    scope: CancelScope | None = None

    def check_cancelled(self) -> None:
        """Raise RequestCancelled when the request being processed was cancelled or is past its deadline.

        Call it between units of work (a decoder step, a window, a block): the worker then stops a request
        nobody waits for instead of being killed as hung. Cheap enough to call often (no system call).
        """
        if self.scope is not None:
            self.scope.check()


class LatencyWindow:
    """Processing times of the last N messages, for the percentiles in status."""

    def __init__(self, size: int = 512) -> None:
        self._ms: collections.deque[float] = collections.deque(maxlen=size)

    def add(self, ms: float) -> None:
        self._ms.append(ms)

    def percentiles(self) -> dict[str, float | None]:
        if not self._ms:
            return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "count": 0}
        ordered = sorted(self._ms)

        def pick(q: float) -> float:
            return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

        return {"p50_ms": pick(0.50), "p95_ms": pick(0.95), "p99_ms": pick(0.99), "count": len(ordered)}


class Plugin:
    """A pipeline stage. Subclasses set the class attributes and override `process`.

    `inputs` are the message types the stage accepts ("*" accepts any);
    `outputs` the types it emits. For every input with `final=True` the stage
    must emit exactly one output with `final=True`; the worker enforces it.
    """

    name: ClassVar[str] = ""
    inputs: ClassVar[tuple[str, ...]] = ()
    outputs: ClassVar[tuple[str, ...]] = ()
    Params: ClassVar[type[PluginParams]] = PluginParams

    def __init__(self, params: PluginParams, context: PluginContext) -> None:
        self.params = params
        self.context = context
        self.log = context.log

    @classmethod
    def validate_params(cls, raw: dict[str, Any]) -> PluginParams:
        return cls.Params.model_validate(raw)

    def setup(self) -> None:
        """Load models and open devices. Raising here marks the stage as failing."""

    def warmup(self) -> None:
        """Run once on representative input so the first real request is not slow."""

    def process(self, message: Message) -> Iterator[Message]:
        raise NotImplementedError(f"plugin {self.name!r} does not implement process()")

    def apply_profile(self, params: PluginParams) -> None:
        """Take new parameters (a profile switch). Override when a model must be reloaded."""
        self.params = params

    def cancel(self, request_id: str) -> None:
        """Forget the state of a request that ended early (deadline, client gone, worker restart)."""

    def wakeup_fd(self) -> int | None:
        """A source stage (a microphone) returns a file descriptor that becomes readable when `poll` has output."""
        return None

    def poll(self) -> Iterator[Message]:
        """A source stage's unsolicited messages; the worker calls it when `wakeup_fd` is readable and at least
        every POLL_INTERVAL_S. Each carries data.source; the daemon routes it by its type, like a client's."""
        return iter(())

    def finish_streams(self) -> None:
        """The daemon is stopping: the next `poll` sends all that was heard up to now and closes every open
        stream, and later polls send nothing. Without it a stop would drop what the source still held."""

    def release_memory(self) -> None:
        """Free what can be rebuilt: caches, spare buffers, allocator arenas (the memory capper asks).

        Called between requests, never during one, when tcccd nears its memory budget or this worker
        passes its share. Drop what the next request can rebuild at some cost (a buffer cache, an ONNX
        Runtime arena via its `memory.enable_memory_arena_shrinkage` run option, a KV cache sized for the
        longest input so far); keep the model. The worker then collects garbage and calls malloc_trim, so
        freed Python objects reach the kernel too.
        """

    def health(self) -> dict[str, Any]:
        """Extra facts for `tcccd status` (backend in use, model, device)."""
        return {}

    def teardown(self) -> None:
        """Release what `setup` took, quickly: a worker that is stopping exits 1 s after it is told to, with or
        without the rest of its teardown (tcccd.worker.lifeline)."""


def cpu_threads() -> int:
    """Threads a compute-bound plugin should use.

    The supervisor sets TCCCD_THREADS for each worker (a stage's `threads`, or the cores shared out among the
    workers), so two busy stages do not each spin a pool the size of the box; without it, this process's cores.
    """
    configured = os.environ.get("TCCCD_THREADS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def elapsed_ms(since_s: float) -> float:
    return (time.perf_counter() - since_s) * 1000.0
