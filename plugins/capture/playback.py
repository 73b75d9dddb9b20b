"""What the speaker plays next, shared between the audio callback and the stage.

The callback takes exactly one block per call and never waits: a lock held for
a few array copies is the only contention. The stage appends sentences as they
arrive (TTS streams them) and stops everything at once on barge-in.
"""

from __future__ import annotations

import collections
import threading
import time

import numpy as np


class PlaybackQueue:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._chunks: collections.deque[np.ndarray] = collections.deque()
        self._offset = 0
        self.queued_samples = 0
        self.played_samples = 0
        self.last_sound_at = 0.0  # monotonic time the callback last played a non-silent block

    def add(self, audio: np.ndarray) -> None:
        """Queue mono float32 samples at the device's rate."""
        if len(audio) == 0:
            return
        with self._lock:
            self._chunks.append(np.ascontiguousarray(audio, dtype=np.float32))
            self.queued_samples += len(audio)

    def take(self, frames: int) -> np.ndarray:
        """The next `frames` samples to play, silence where nothing is queued (called from the audio callback)."""
        out = np.zeros(frames, np.float32)
        filled = 0
        with self._lock:
            while filled < frames and self._chunks:
                head = self._chunks[0]
                n = min(frames - filled, len(head) - self._offset)
                out[filled:filled + n] = head[self._offset:self._offset + n]
                filled += n
                self._offset += n
                if self._offset == len(head):
                    self._chunks.popleft()
                    self._offset = 0
            self.queued_samples -= filled
            self.played_samples += filled
        if filled:
            self.last_sound_at = time.monotonic()
        return out

    def stop(self) -> int:
        """Drop everything not yet played; returns the samples dropped."""
        with self._lock:
            dropped = self.queued_samples
            self._chunks.clear()
            self._offset = 0
            self.queued_samples = 0
        return dropped

    @property
    def playing(self) -> bool:
        return self.queued_samples > 0
