"""Speculative finals: an utterance's final is decoded as soon as its audio is settled, and kept if the pause ends it.

A live utterance ends after `min_silence_ms` of pause (500 ms by default), and
its audio is its speech and the pad after it (`speech_pad_ms`): all of it is in
once the pad has come, ~200 ms into the pause (streaming.UtteranceSegmenter.
settled). The final's decode starts then, on a thread of its own; when the
pause reaches the endpoint, the reply is that decode (finished, or waited for),
of the very audio the final would decode. Speech that resumes first abandons
it (its decoder stops at its next step) and the utterance goes on. The record
is the same either way; only the wait after the medic stops speaking is
shorter, by up to the rest of the pause.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcccd.kit.plugin import RequestCancelled

FinalDecode = Callable[[np.ndarray, float, Callable[[], None]], Any]  # (audio, start_s, check) -> the final's parts


class SpeculationAbandoned(RequestCancelled):
    """Raised inside a speculative decode once speech resumed (or the stream closed)."""


@dataclass
class SpeculationCounts:
    """For the stage's health: finals that came from a speculative decode, and speculations abandoned because
    speech resumed before the endpoint."""

    used: int = 0
    abandoned: int = 0

    def as_health(self) -> dict[str, int]:
        return {"speculative_finals_used": self.used, "speculative_finals_abandoned": self.abandoned}


@dataclass
class Speculation:
    """One stream's speculative final: which utterance, how much audio, the decode in flight."""

    counts: SpeculationCounts
    index: int = -1
    samples: int = 0
    future: Future | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        return self.future is not None

    def start(self, pool: ThreadPoolExecutor, decode: FinalDecode, index: int, start_s: float,
              audio: np.ndarray) -> None:
        """Decode utterance `index`'s settled `audio` on the pool's thread."""
        self.abandon(count=False)
        self.stop = threading.Event()
        stop = self.stop

        def check() -> None:
            if stop.is_set():
                raise SpeculationAbandoned("speculative final abandoned: speech resumed", code="cancelled")

        self.index, self.samples = index, len(audio)
        self.future = pool.submit(decode, audio, start_s, check)

    def take(self, index: int, samples: int) -> Any:
        """The speculative decode's result when it decoded exactly this utterance's audio (waiting for it if it
        is still running); None when it did not, or failed (the caller decodes the final itself)."""
        future, matches = self.future, (self.index, self.samples) == (index, samples)
        if future is None or not matches:
            self.abandon()
            return None
        self.future = None
        try:
            result = future.result()
        except Exception:  # noqa: BLE001 - the final is decoded again in line; the caller logs nothing lost
            return None
        self.counts.used += 1
        return result

    def abandon(self, count: bool = True) -> None:
        """Speech resumed, or the stream closed: stop the decode in flight."""
        if self.future is None:
            return
        self.counts.abandoned += count
        self.stop.set()
        self.future.cancel()
        self.future = None
