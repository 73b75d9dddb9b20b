"""A file's speech packed into as few 30 s windows as it needs, each segment's time mapped back to the file.

VAD cuts a recording at pauses longer than `max_gap_s`; decoded one by one,
every such chunk paid its own encoder pass and decoder start, so a 45 s
recording with a dozen pauses cost a dozen windows where faster-whisper,
which concatenates the speech its VAD found, pays two. Here the chunks are
laid one after another into windows of at most `window_s`, with a short
pause between them (`gap_s`: the model still hears where one phrase ends),
and the times the model gives on a window are mapped back to the file: a
time inside a chunk moves with it, a time in the pause between two chunks
sticks to the end of the chunk before. The coverage check (coverage.py) then
compares the kept words with VAD's speech on the file's own clock, so a
phrase lost in a packed window is decoded again or reported, as before.

A chunk that starts on a word (`leads`: a recording whose first sample is
speech, so VAD's pad had nothing to take) gets the same pause before it even
first in its window: tiny.en wrote "It could apply" and "can apply" for the
kit's own voice saying "Tourniquet applied" from its first sample, where
faster-whisper with the same weights kept the first word; with the pause,
tcccd keeps it too (tests/data/first-words). Chunks with a pause of their own
are left as they are: on real voices the added pause changed other words
both ways.
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass

import numpy as np

from tcccd.plugins.whisper.engine.results import Transcription
from tcccd.plugins.whisper.stage.vad import RATE_HZ, Span


@dataclass(frozen=True)
class Piece:
    """One chunk in a window: where it starts there and in the file, and its length (samples)."""

    window_start: int
    file_start: int
    length: int


@dataclass
class PackedWindow:
    audio: np.ndarray
    pieces: list[Piece]

    def file_s(self, window_s: float) -> float:
        """A time on the window's clock as a time in the file."""
        return self._in_piece(self._piece_at(window_s), window_s)

    def file_span(self, start_s: float, end_s: float) -> tuple[float, float]:
        """A word's start and end in the file: both in the piece that holds its middle (a word is never split
        between two chunks; the alignment often stretches a phrase's last word into the pause after it)."""
        piece = self._piece_at((start_s + end_s) / 2)
        return self._in_piece(piece, start_s), self._in_piece(piece, end_s)

    def _piece_at(self, window_s: float) -> Piece:
        at = round(window_s * RATE_HZ)
        return self.pieces[max(0, bisect.bisect_right([p.window_start for p in self.pieces], at) - 1)]

    @staticmethod
    def _in_piece(piece: Piece, window_s: float) -> float:
        at = round(window_s * RATE_HZ)
        return (piece.file_start + min(max(at - piece.window_start, 0), piece.length)) / RATE_HZ

    def on_file_clock(self, result: Transcription) -> Transcription:
        """`result` (decoded on this window) with every segment, word and dropped span on the file's clock."""
        segments = [dataclasses.replace(s, start_s=self.file_s(s.start_s), end_s=self.file_s(s.end_s),
                                        review=self._reviewed(s.review)) for s in result.segments]
        dropped = [dataclasses.replace(d, start_s=round(self.file_s(d.start_s), 3),
                                       end_s=round(self.file_s(d.end_s), 3)) for d in result.dropped]
        return dataclasses.replace(result, segments=segments, dropped=dropped)

    def _reviewed(self, written: object) -> object:
        if written is None or not getattr(written, "words", None):
            return written
        words = []
        for w in written.words:
            start_s, end_s = self.file_span(w["start_s"], w["end_s"])
            words.append({**w, "start_s": round(start_s, 3), "end_s": round(end_s, 3)})
        return dataclasses.replace(written, words=words)


def pack_windows(audio: np.ndarray, chunks: list[Span], window_s: float = 30.0, gap_s: float = 0.3,
                 leads: list[bool] | None = None) -> list[PackedWindow]:
    """The chunks, in order, a pause of `gap_s` between them (and before each chunk `leads` marks), in windows
    of at most `window_s` (a longer chunk gets a window of its own)."""
    leads = leads or [False] * len(chunks)
    limit, gap = window_s * RATE_HZ, np.zeros(int(gap_s * RATE_HZ), np.float32)
    windows: list[PackedWindow] = []
    parts: list[np.ndarray] = []
    pieces: list[Piece] = []
    used = 0
    for chunk, lead in zip(chunks, leads, strict=True):
        length = chunk.end - chunk.start
        if pieces and used + len(gap) + length > limit:
            windows.append(PackedWindow(np.concatenate(parts), pieces))
            parts, pieces, used = [], [], 0
        if pieces or lead:
            parts.append(gap)
            used += len(gap)
        pieces.append(Piece(used, chunk.start, length))
        parts.append(audio[chunk.start:chunk.end])
        used += length
    if pieces:
        windows.append(PackedWindow(np.concatenate(parts), pieces))
    return windows


def one_per_chunk(audio: np.ndarray, chunks: list[Span], gap_s: float = 0.3,
                  leads: list[bool] | None = None) -> list[PackedWindow]:
    """Each chunk decoded alone (`pack_windows: false`; a live utterance), after a pause where `leads` says."""
    leads = leads or [False] * len(chunks)
    return [pack_windows(audio, [chunk], float("inf"), gap_s, [lead])[0]
            for chunk, lead in zip(chunks, leads, strict=True)]
