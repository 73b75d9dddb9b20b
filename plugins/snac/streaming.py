"""Streaming decode: audio leaves in growing blocks, each decoded with real context either side.

SNAC's decoder is convolutional with a receptive field of about 2.3 frames each
way. The Orpheus reference re-decodes a 4-frame window per new frame and keeps
one frame of it: four times the work, one frame of left context, and it drops
the first frame and the last two. Here a block of frames is decoded together
with `context_frames` before it and `lookahead_frames` after it, and only the
block is kept. The stream's start and end need no context (a whole-utterance
decode pads there with zeros too), so the first block goes out as soon as
`first_block_frames + lookahead_frames` frames exist, and the tail is flushed
at the end. Block sizes double up to `max_block_frames`: each block's decode
then takes less time than the audio already sent lasts, so playback does not
run dry, while the per-frame cost of the overlap shrinks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .backends import DecoderBackend
from .tokens import CodeStream


@dataclass(frozen=True)
class BlockPolicy:
    context_frames: int = 2
    lookahead_frames: int = 2
    first_block_frames: int = 2
    max_block_frames: int = 12

    def window_sizes(self) -> list[int]:
        """Window lengths in frames a long stream decodes, to allocate and warm at load."""
        sizes = []
        block = min(self.first_block_frames, self.max_block_frames)
        while True:
            sizes.append(block + self.lookahead_frames + (self.context_frames if sizes else 0))
            if block >= self.max_block_frames:
                return sizes
            block = min(2 * block, self.max_block_frames)


class StreamingDecoder:
    """One request's progress: how many frames have left as audio."""

    def __init__(self, backend: DecoderBackend, policy: BlockPolicy, samples_per_frame: int) -> None:
        self._backend = backend
        self._policy = policy
        self._samples_per_frame = samples_per_frame
        self._next_block = min(policy.first_block_frames, policy.max_block_frames)
        self.emitted_frames = 0

    def ready(self, codes: CodeStream, end_of_stream: bool) -> Iterator[np.ndarray]:
        """Samples for every block that can be decoded now; at end of stream, all that remain."""
        while True:
            available = codes.frames
            remaining = available - self.emitted_frames
            if end_of_stream:
                block = min(self._next_block, remaining)
            elif remaining - self._policy.lookahead_frames >= self._next_block:
                block = self._next_block
            else:
                return
            if block <= 0:
                return
            yield self._decode_block(codes, block, available)
            self._next_block = min(2 * self._next_block, self._policy.max_block_frames)

    def _decode_block(self, codes: CodeStream, block: int, available: int) -> np.ndarray:
        start = max(0, self.emitted_frames - self._policy.context_frames)
        end = min(available, self.emitted_frames + block + self._policy.lookahead_frames)
        audio = self._backend.decode(codes.window(start, end))
        keep_from = (self.emitted_frames - start) * self._samples_per_frame
        self.emitted_frames += block
        return audio[keep_from: keep_from + block * self._samples_per_frame]
