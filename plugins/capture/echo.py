"""Keeping tcccd's own voice out of the record, and hearing the medic talk over it.

Two modes. `gate` (the default) silences the microphone while the speaker
plays and for a tail after, long enough for the room's echo to die: nothing
tcccd says can be transcribed. The gate keeps time by the samples themselves as
well as by the clock: a block captured in the same callbacks as sound played,
and the device's echo delay plus the tail after it, are gated however late the
stage gets to them (a loaded CPU processes blocks late, when the clock says
playback is long over). Under the gate the stage still watches for the medic
(`talk_over`): WebRTC AEC3 cleans the gated audio and a voice detector watches
the result. 80 ms of speech, from a canceller that was removing the kit's echo
just before (an unlearned one passes the kit's own voice, which no voice
detector can tell from the medic's), is a talk-over: playback stops and nothing
new plays over the medic. With `alert` (the default) the gated audio is still
never passed on, and the talk-over is counted so the daemon can say that the
first words may be missing; with `pass` the cleaned audio is passed from the
start of that run of speech until the gate would have opened (the medic's
words, and whatever of the kit the canceller left); `off` only gates.
`aec` runs AEC3 on every 10 ms frame, fed the exact samples played in the same
duplex callback, so the medic stays audible while tcccd talks; the same voice
detector on the cancelled signal is what lets the medic barge in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

RATE_HZ = 16000
FRAME_SAMPLES = RATE_HZ // 100  # AEC3 and the voice detector work on 10 ms frames
MIN_ERLE_DB = 12.0  # echo the canceller must have been removing for a talk-over to be believed
MIN_ECHO_FRAMES = 30  # ... over at least 0.3 s of the kit's echo (decayed count)
ERLE_DECAY = 0.995  # per 10 ms frame: the record covers about the last 2 s
ECHO_FLOOR = 1e-6  # mean square of a frame with echo in it (-60 dBFS)


@dataclass(frozen=True)
class EchoSettings:
    mode: Literal["gate", "aec"] = "gate"
    gate_tail_ms: int = 300
    echo_delay_ms: int = 0  # from a block handed to the speaker to its echo in the microphone's blocks
    aec_delay_ms: int = 0
    barge_in: bool = True
    talk_over: Literal["alert", "pass", "off"] = "alert"
    barge_in_probability: float = 0.7
    barge_in_frames: int = 8  # 80 ms of speech during playback
    barge_in_min_dbfs: float = -45.0


class EchoGuard:
    """Near-end 16 kHz blocks in, what may be transcribed out; says when the medic barges in.

    Every sample in comes out once, in order (a gated one as silence): the stream's clock stays the
    microphone's. Under AEC at most a 10 ms frame, and under the gate's talk-over watch barge_in_frames,
    come out one call late.
    """

    def __init__(self, settings: EchoSettings) -> None:
        self.settings = settings
        self._aec: Any = None
        self._vad: Any = None
        self._near = np.zeros(0, np.float32)
        self._far = np.zeros(0, np.float32)
        self._speech_frames = 0
        self._tail_samples = 0  # microphone samples still to gate after the last block played with sound
        self._held: list[tuple[np.ndarray, float]] = []  # the latest cleaned frames under the gate (and the
        # microphone's energy in each): a talk-over's first words
        self._erle_db_sum = self._echo_frames = 0.0  # the canceller's record (_score)
        self.talking_over = False  # the medic talks over the kit: the gate passes the cleaned audio
        self.talk_overs = 0
        self.gated_samples = 0
        if settings.mode == "aec" or settings.talk_over != "off":
            import pywebrtc_audio

            self._aec = pywebrtc_audio.EchoCanceller(RATE_HZ, 1, settings.aec_delay_ms)
            self._vad = pywebrtc_audio.VoiceDetector(RATE_HZ, 1)

    def process(self, near: np.ndarray, far: np.ndarray, speaking: bool, since_sound_s: float) -> tuple[
            np.ndarray, bool]:
        """(audio to pass on, barge-in detected). `far` is what was played in the same callbacks as `near`.

        `speaking` is whether playback is under way; `since_sound_s` how long ago the speaker last made sound.
        """
        if self.settings.mode == "aec":
            frames = self._cancel(near, far, speaking)
            return _joined([f for f, _, _ in frames]), self.settings.barge_in and any(b for _, b, _ in frames)
        return self._gate(near, far, speaking, since_sound_s)

    def _gate(self, near: np.ndarray, far: np.ndarray, speaking: bool, since_sound_s: float) -> tuple[
            np.ndarray, bool]:
        if np.any(far):
            self._tail_samples = len(near) + RATE_HZ * (self.settings.gate_tail_ms
                                                        + self.settings.echo_delay_ms) // 1000
        gated = speaking or since_sound_s * 1000 < self.settings.gate_tail_ms or self._tail_samples > 0
        self._tail_samples = max(0, self._tail_samples - len(near))
        if not gated:
            return _joined([*self._open_gate(), near]), False
        self.gated_samples += len(near)
        if self._aec is None:
            return np.zeros_like(near), False
        out: list[np.ndarray] = []
        barge_in = self.talking_over and bool(np.any(far))  # the medic still talks: nothing new plays over them
        passing = self.settings.talk_over == "pass"
        for frame, speech_run, near_energy in self._cancel(near, far, True):
            if self.talking_over:
                out.append(frame if passing else np.zeros_like(frame))
                continue
            self._held.append((frame, near_energy))
            if speech_run and self._canceller_proven():
                self.talking_over, barge_in = True, True
                self.talk_overs += 1
                out += [held if passing else np.zeros_like(held) for held, _ in self._held]
                self._held = []
            elif len(self._held) > self.settings.barge_in_frames:
                older, older_energy = self._held.pop(0)
                self._score(older, older_energy)
                out.append(np.zeros_like(older))
        return _joined(out), barge_in

    def _score(self, cleaned: np.ndarray, near_energy: float) -> None:
        """How much of the kit's echo the canceller removed, over the gated frames before any run of speech
        (decaying over ~2 s): the evidence that what it passes now is the medic, not the kit it failed to cancel."""
        self._erle_db_sum *= ERLE_DECAY
        self._echo_frames *= ERLE_DECAY
        if near_energy > ECHO_FLOOR:  # per frame, in dB: a few loud frames of the medic do not outweigh the rest
            out_energy = float(np.mean(np.square(cleaned, dtype=np.float64)))
            self._erle_db_sum += min(40.0, max(-10.0, 10 * math.log10(near_energy / max(out_energy, 1e-12))))
            self._echo_frames += 1

    def _canceller_proven(self) -> bool:
        """A talk-over is believed only from a canceller that was removing MIN_ERLE_DB of the kit's echo just
        before: an unconverged one (a fresh stream's first read-back) passes the kit's own voice, which a voice
        detector cannot tell from the medic's (capture test: 0.35 of full scale of the read-back passed)."""
        if self._echo_frames < MIN_ECHO_FRAMES:
            return False
        return self._erle_db_sum / self._echo_frames >= MIN_ERLE_DB

    def _open_gate(self) -> list[np.ndarray]:
        """What the gate still holds when it opens: silence, unless the medic was talking over the kit."""
        rest = [*(held for held, _ in self._held), self._near]
        self._held, self._near, self._far = [], np.zeros(0, np.float32), np.zeros(0, np.float32)
        self._speech_frames = 0
        passed = self.talking_over and self.settings.talk_over == "pass"
        self.talking_over = False
        return rest if passed else [np.zeros_like(r) for r in rest]

    def _cancel(self, near: np.ndarray, far: np.ndarray, speaking: bool) -> list[tuple[np.ndarray, bool, float]]:
        """AEC3 over whole 10 ms frames (the rest waits for the next block), each with whether it completed a
        run of barge_in_frames frames of speech while the kit spoke, and the microphone's energy in it."""
        self._near = np.concatenate([self._near, near])
        self._far = np.concatenate([self._far, far[:len(near)]])
        whole = len(self._near) - len(self._near) % FRAME_SAMPLES
        frames = []
        for start in range(0, whole, FRAME_SAMPLES):
            heard = self._near[start:start + FRAME_SAMPLES]
            frame = self._aec.process(heard, self._far[start:start + FRAME_SAMPLES])
            frames.append((np.asarray(frame, np.float32), self._speech_in(frame, speaking),
                           float(np.mean(np.square(heard, dtype=np.float64)))))
        self._near, self._far = self._near[whole:], self._far[whole:]
        return frames

    def _speech_in(self, frame: np.ndarray, speaking: bool) -> bool:
        """True once the medic has talked for barge_in_frames frames in a row while the speaker plays."""
        from tcccd.plugins.capture.levels import dbfs

        probability = self._vad.process(frame)
        loud = dbfs(frame) >= self.settings.barge_in_min_dbfs
        if speaking and loud and probability >= self.settings.barge_in_probability:
            self._speech_frames += 1
        else:
            self._speech_frames = 0
        if self._speech_frames >= self.settings.barge_in_frames:
            self._speech_frames = 0
            return True
        return False


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.float32, copy=False) if parts else np.zeros(0, np.float32)
