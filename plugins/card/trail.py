"""From the words of the record back to the words heard: the transcript's audit trail, read by position.

A transcript's `text` joins its segments' texts; each segment's text is what
Whisper `heard` after two rewriting steps, both listed with positions: the
vocabulary step (`corrections[]`, spans of `heard`) and then the number step
(`numbers[]`, spans of the corrected text). Undoing them in reverse order maps any
span of `text` to the span of `heard` it came from; a span that starts or ends
inside a rewrite widens to the whole rewrite. The ASR's `uncertain[]` words and
the number step's time rewrites are turned into spans of `text` too.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from tcccd.wire.card_events import HeardSpan
from tcccd.wire.card_stage import CardExtract, Segment


@dataclass(frozen=True)
class _Rewrite:
    in_start: int
    in_end: int
    out_start: int
    out_end: int


def _rewrites(spans: list[tuple[int, int, str]]) -> list[_Rewrite]:
    """Rewrites of an input string (its span [start, end) replaced by `written`), placed in the output string."""
    placed, shift = [], 0
    for start, end, written in sorted(spans):
        placed.append(_Rewrite(start, end, start + shift, start + shift + len(written)))
        shift += len(written) - (end - start)
    return placed


def _back(pos: int, rewrites: list[_Rewrite], starts: list[int], edge: str) -> int:
    """A position of the output mapped to the input; inside a rewrite, to its start or end (`edge`). `starts` are the
    rewrites' output starts, in order (a binary search: an event's span maps in log time)."""
    i = (bisect_right(starts, pos) if edge == "start" else bisect_left(starts, pos)) - 1
    if i < 0:
        return pos
    r = rewrites[i]
    if pos < r.out_end or (edge == "end" and pos == r.out_end):
        return r.in_start if edge == "start" else r.in_end
    return pos + r.in_end - r.out_end


class Trail:
    """The audit trail of one transcript, for mapping event spans; built once per request."""

    def __init__(self, request: CardExtract) -> None:
        self.segments = request.segments
        self.offsets = _segment_offsets(request.text, request.segments)
        self._numbers = [_rewrites([(n.start_char, n.end_char, n.written) for n in s.numbers]) for s in self.segments]
        self._corrections = [_rewrites([(c.start_char, c.end_char, c.term) for c in s.corrections])
                             for s in self.segments]
        self._number_starts = [[r.out_start for r in rs] for rs in self._numbers]
        self._correction_starts = [[r.out_start for r in rs] for rs in self._corrections]

    def heard(self, start: int, end: int) -> list[HeardSpan]:
        spans = []
        for i, (segment, offset) in enumerate(zip(self.segments, self.offsets, strict=True)):
            if offset is None or segment.heard is None:
                continue
            local_start, local_end = max(start - offset, 0), min(end - offset, len(segment.text))
            if local_start >= local_end:
                continue
            numbers, corrections = (self._numbers[i], self._number_starts[i]), (self._corrections[i],
                                                                                 self._correction_starts[i])
            a = _back(_back(local_start, *numbers, "start"), *corrections, "start")
            b = _back(_back(local_end, *numbers, "end"), *corrections, "end")
            spans.append(HeardSpan(segment=i, start_char=a, end_char=b, text=segment.heard[a:b]))
        return spans

    def uncertain(self) -> list[tuple[int, int]]:
        """Spans of `text` the ASR marked uncertain."""
        return [(offset + u.start_char, offset + u.end_char)
                for segment, offset in zip(self.segments, self.offsets, strict=True) if offset is not None
                for u in segment.uncertain or []]

    def time_rewrites(self) -> list[tuple[int, int]]:
        """Spans of `text` the number step wrote as times."""
        found = []
        for i, (segment, offset) in enumerate(zip(self.segments, self.offsets, strict=True)):
            if offset is None:
                continue
            ordered = sorted(segment.numbers, key=lambda n: n.start_char)
            found += [(offset + r.out_start, offset + r.out_end)
                      for n, r in zip(ordered, self._numbers[i], strict=True) if n.rule == "time"]
        return found


def _segment_offsets(text: str, segments: list[Segment]) -> list[int | None]:
    """Where each segment's text starts in the transcript's text (None: not found there, so not mapped)."""
    offsets: list[int | None] = []
    cursor = 0
    for segment in segments:
        at = text.find(segment.text.strip(), cursor) if segment.text.strip() else -1
        offsets.append(None if at < 0 else at - (len(segment.text) - len(segment.text.lstrip())))
        if at >= 0:
            cursor = at + len(segment.text.strip())
    return offsets
