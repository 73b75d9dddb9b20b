"""Partial transcripts that never delay a final.

A partial decodes the utterance so far (a full encoder pass each time). Run in
line, as before, each one held up the stream's next chunks: on 2 cores the
end of an utterance was seen only after the partials queued ahead of it, and
the final came 3.9 s after the speech ended instead of 0.9 s. So a partial
runs on a thread of its own, one at a time per stream, and the stream goes on:

- when an utterance ends, the partial in progress is abandoned (its decoder
  stops at the next step) and the final decodes at once;
- no partial starts while the stream is behind real time (chunks processed
  later than they were spoken): catching up comes first;
- the cadence adapts to what the machine sustains: the next partial starts no
  sooner than `interval` after the last one started, and no sooner than the
  last one took after it ended, so partials use at most about half the time
  (on a GPU the 300 ms of `emergency` stays 300 ms; on 2 CPU cores it stretches).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcccd.kit.plugin import RequestCancelled

MAX_LAG_S = 0.3  # a stream this far behind real time skips partials until it has caught up


class PartialAbandoned(RequestCancelled):
    """Raised inside a partial's decoder once its utterance has ended (or the stream closed)."""


@dataclass
class PartialCounts:
    """What status shows of the partials, over every stream: done, skipped because the stream was behind,
    abandoned for a final, failed (the stream went on), and the last one's cost."""

    done: int = 0
    skipped_behind: int = 0
    abandoned: int = 0
    failed: int = 0
    last_cost_ms: float = 0.0

    def finished(self, cost_s: float) -> None:
        self.done += 1
        self.last_cost_ms = cost_s * 1000

    def as_health(self) -> dict[str, float | int]:
        return {"partials_done": self.done, "partials_skipped_behind": self.skipped_behind,
                "partials_abandoned": self.abandoned, "partials_failed": self.failed,
                "partial_cost_ms": round(self.last_cost_ms, 1)}


@dataclass
class PartialSchedule:
    """One stream's partials: the one in flight, when the last started and what it cost, the stream's lag."""

    counts: PartialCounts
    pending: Future | None = None
    pending_utterance: int = -1
    stop: threading.Event = field(default_factory=threading.Event)
    started_at_s: float = float("-inf")
    finished_at_s: float = float("-inf")
    cost_s: float = 0.0
    started_samples: int = 0
    origin_s: float = float("inf")  # min over chunks of (arrival - audio received): the stream's best pace

    def note_chunk(self, received_s: float, now_s: float | None = None) -> float:
        """Record a chunk's arrival; the stream's lag behind real time in seconds (0 when on time)."""
        now_s = time.monotonic() if now_s is None else now_s
        self.origin_s = min(self.origin_s, now_s - received_s)
        return now_s - received_s - self.origin_s

    def due(self, interval_ms: int, held_samples: int, rate_hz: int, lag_s: float,
            now_s: float | None = None) -> bool:
        """Whether to start a partial now (speech goes on: the caller checks)."""
        now_s = time.monotonic() if now_s is None else now_s
        if self.pending is not None:
            return False
        interval_s = interval_ms / 1000
        grown_s = (held_samples - self.started_samples) / rate_hz
        if grown_s < interval_s or now_s - self.started_at_s < interval_s or now_s - self.finished_at_s < self.cost_s:
            return False
        if lag_s > MAX_LAG_S:
            self.counts.skipped_behind += 1
            return False
        return True

    def start(self, pool: ThreadPoolExecutor, decode: Callable[[np.ndarray, Callable[[], None]], str],
              audio: np.ndarray, utterance: int) -> None:
        """Decode `audio` (the utterance so far, copied) on the pool's thread."""
        self.stop = threading.Event()
        stop, self.pending_utterance = self.stop, utterance
        self.started_at_s, self.started_samples = time.monotonic(), len(audio)

        def check() -> None:
            if stop.is_set():
                raise PartialAbandoned("partial abandoned: its utterance ended", code="cancelled")

        self.pending = pool.submit(self._timed, decode, audio, check)

    def _timed(self, decode: Callable[[np.ndarray, Callable[[], None]], str], audio: np.ndarray,
               check: Callable[[], None]) -> str:
        t0 = time.monotonic()
        try:
            return decode(audio, check)
        finally:
            self.finished_at_s = time.monotonic()
            self.cost_s = self.finished_at_s - t0

    def take(self, open_utterance: int) -> str | None:
        """The finished partial's text if it is of the utterance still going on; None otherwise (not done yet,
        abandoned, or its utterance has had its final)."""
        if self.pending is None or not self.pending.done():
            return None
        future, self.pending = self.pending, None
        if future.cancelled() or isinstance(future.exception(), PartialAbandoned):
            return None
        if future.exception() is not None:
            raise future.exception()
        self.counts.finished(self.cost_s)
        return future.result() if self.pending_utterance == open_utterance else None

    def take_logged(self, open_utterance: int, log: Any) -> str | None:
        """take(), a failed partial logged and counted rather than raised: a lost preview, not a lost utterance
        (the final decodes the same audio). Raised into the stream, one once ended it and dropped its audio."""
        try:
            return self.take(open_utterance)
        except Exception as exc:  # noqa: BLE001 - a preview must not end the medic's stream
            self.counts.failed += 1
            log.error("partial transcript failed; the stream goes on", exc_info=exc)
            return None

    def abandon(self) -> None:
        """The utterance ended or the stream closed: stop the partial in flight (its thread finishes on its own)."""
        if self.pending is not None:
            if not self.pending.done():
                self.counts.abandoned += 1
            self.stop.set()
            self.pending.cancel()
            self.pending = None
        self.started_samples = 0
