"""The stage's coverage pass: VAD speech that no kept word covers is decoded again, or reported and counted.

review/coverage.py decides which stretches are uncovered and what a second
decode found; this module runs that second decode through the stage's own
decoder (a `PieceDecoder`: the piece alone, after the pause every window gives
a piece) and keeps the count that the stage's health reports.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from tcccd.kit.plugin import elapsed_ms
from tcccd.plugins.whisper.review.coverage import CoverageSettings, covered_by, recover, uncovered
from tcccd.plugins.whisper.review.heard import Heard
from tcccd.plugins.whisper.stage.vad import RATE_HZ


class PieceDecoder(Protocol):
    def decode_piece(self, audio: np.ndarray, offset_s: float, timings: dict[str, float], heard: Heard,
                     check: Callable[[], None] | None = None) -> None:
        """Add what `audio` (starting at `offset_s` on the recording's clock) holds to `heard`, reviewed;
        `check` (raises to abandon the work) in place of the request's own."""


class CoveragePass:
    def __init__(self, decoder: PieceDecoder, log: Any, settings: CoverageSettings | None = None) -> None:
        self.decoder = decoder
        self.log = log
        self.settings = settings or CoverageSettings()
        self.not_transcribed = 0  # stretches reported in `dropped`, for the stage's health

    def __call__(self, audio: np.ndarray, speech: list[tuple[float, float]], heard: Heard, offset_s: float,
                 timings: dict[str, float], check: Callable[[], None] | None = None) -> None:
        """Speech VAD found in `audio` (times on the recording's clock) that no word of `heard` covers is decoded
        again alone; what still gives no words goes to heard.dropped (reason not_transcribed), logged."""
        settings = self.settings
        gaps = uncovered(speech, covered_by(heard.segments, heard.dropped, settings.word_margin_s),
                         settings.min_uncovered_s, settings.min_head_uncovered_s)
        if not gaps:
            return
        t0 = time.perf_counter()

        def redo(start_s: float, end_s: float) -> list[dict[str, Any]]:
            first = max(0, int((start_s - offset_s - settings.redo_margin_s) * RATE_HZ))
            last = min(len(audio), int((end_s - offset_s + settings.redo_margin_s) * RATE_HZ))
            again = Heard()
            self.decoder.decode_piece(audio[first:last], offset_s + first / RATE_HZ, timings, again, check)
            heard.dropped.extend(again.dropped)
            return again.segments

        for start_s, end_s in recover(gaps, redo, heard.segments, heard.dropped):
            self.not_transcribed += 1
            self.log.warning("speech not transcribed: VAD heard speech that no decode turned into words",
                             start_s=start_s, end_s=end_s)
        timings["coverage_ms"] = elapsed_ms(t0)
