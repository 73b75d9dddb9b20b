"""Keeping tcccd's own voice out of the record, and hearing the medic talk over it.

Two modes. `gate` (the default) silences the microphone while the speaker
plays and for a tail after, long enough for the room's echo to die: nothing
tcccd says can be transcribed, and nothing the medic says meanwhile is heard.
The gate keeps time by the samples themselves as well as by the clock: a block
captured in the same callbacks as sound played, and the device's echo delay
plus the tail after it, are gated however late the stage gets to them (a
loaded CPU processes blocks late, when the clock says playback is long over).
`aec` runs WebRTC AEC3 on every 10 ms frame, fed the exact samples played in
the same duplex callback, so the medic stays audible while tcccd talks; a
voice detector on the cancelled signal is what lets the medic barge in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

RATE_HZ = 16000
FRAME_SAMPLES = RATE_HZ // 100  # AEC3 and the voice detector work on 10 ms frames


@dataclass(frozen=True)
class EchoSettings:
    mode: Literal["gate", "aec"] = "gate"
    gate_tail_ms: int = 300
    echo_delay_ms: int = 0  # from a block handed to the speaker to its echo in the microphone's blocks
    aec_delay_ms: int = 0
    barge_in: bool = True
    barge_in_probability: float = 0.7
    barge_in_frames: int = 8  # 80 ms of speech during playback
    barge_in_min_dbfs: float = -45.0


class EchoGuard:
    """Near-end 16 kHz blocks in, what may be transcribed out; says when the medic barges in."""

    def __init__(self, settings: EchoSettings) -> None:
        self.settings = settings
        self._aec: Any = None
        self._vad: Any = None
        self._near = np.zeros(0, np.float32)
        self._far = np.zeros(0, np.float32)
        self._speech_frames = 0
        self._tail_samples = 0  # microphone samples still to gate after the last block played with sound
        self.gated_samples = 0
        if settings.mode == "aec":
            import pywebrtc_audio

            self._aec = pywebrtc_audio.EchoCanceller(RATE_HZ, 1, settings.aec_delay_ms)
            self._vad = pywebrtc_audio.VoiceDetector(RATE_HZ, 1)

    def process(self, near: np.ndarray, far: np.ndarray, speaking: bool, since_sound_s: float) -> tuple[
            np.ndarray, bool]:
        """(audio to pass on, barge-in detected). `far` is what was played in the same callbacks as `near`.

        `speaking` is whether playback is under way; `since_sound_s` how long ago the speaker last made sound.
        """
        if self._aec is None:
            if np.any(far):
                self._tail_samples = len(near) + RATE_HZ * (self.settings.gate_tail_ms
                                                            + self.settings.echo_delay_ms) // 1000
            gated = speaking or since_sound_s * 1000 < self.settings.gate_tail_ms or self._tail_samples > 0
            self._tail_samples = max(0, self._tail_samples - len(near))
            if gated:
                self.gated_samples += len(near)
                return np.zeros_like(near), False
            return near, False
        return self._cancel(near, far, speaking)

    def _cancel(self, near: np.ndarray, far: np.ndarray, speaking: bool) -> tuple[np.ndarray, bool]:
        self._near = np.concatenate([self._near, near])
        self._far = np.concatenate([self._far, far[:len(near)]])
        whole = len(self._near) - len(self._near) % FRAME_SAMPLES
        out = np.empty(whole, np.float32)
        barge_in = False
        for start in range(0, whole, FRAME_SAMPLES):
            frame = self._aec.process(self._near[start:start + FRAME_SAMPLES], self._far[start:start + FRAME_SAMPLES])
            out[start:start + FRAME_SAMPLES] = frame
            barge_in = self._speech_in(frame, speaking) or barge_in
        self._near, self._far = self._near[whole:], self._far[whole:]
        return out, barge_in

    def _speech_in(self, frame: np.ndarray, speaking: bool) -> bool:
        """True once the medic has talked for barge_in_frames frames in a row while the speaker plays."""
        from tcccd.plugins.capture.levels import dbfs

        probability = self._vad.process(frame)
        loud = dbfs(frame) >= self.settings.barge_in_min_dbfs
        if speaking and self.settings.barge_in and loud and probability >= self.settings.barge_in_probability:
            self._speech_frames += 1
        else:
            self._speech_frames = 0
        if self._speech_frames >= self.settings.barge_in_frames:
            self._speech_frames = 0
            return True
        return False
