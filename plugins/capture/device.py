"""One PortAudio duplex stream: the microphone in and the speaker out, in the same callback.

One stream for both directions means the block played and the block heard are
handed over together, so echo cancellation is fed exactly what was played, on
the same clock. The callback does no DSP: it copies the input block and the
played block into a bounded buffer (a full buffer drops the oldest block and
counts an overrun), fills the output from the playback queue and wakes the
stage through an eventfd. Everything heavier runs on the stage's thread.

A device with a microphone and no output (a USB microphone alone) is opened
for input only: it is heard the same way, and nothing can be played on it
(`has_speaker` is false; the stage refuses read-back and says why).

On silence the stage is not woken: a block whose peak stays under `quiet_peak`
is kept like any other, and the worker's own poll (every 0.25 s) collects it.
A louder block wakes the stage at once and keeps the chunk pace for
`hangover_blocks`, so speech onset leaves without waiting, and so does the
pause after speech that ASR needs to end the utterance. On a silent microphone
that is ~4 wakes a second instead of ~16.

The first pass over the host's capture buffer is not sound. PulseAudio's ALSA plugin moves its pointer a
whole period ahead while copying only what the server had (measured here: one block of each period of four in
a new stream's first periods), so PortAudio hands the rest of each period as whatever that memory last held:
zeros in a fresh process, freed heap memory (-1.0, -0.5, small values at fixed offsets) in a long-lived one,
which the level meter counts as clipping and ASR hears as noise. The buffer is the input latency PortAudio
reports plus one period (a 300 ms stream's last stale block was its 18th of 20 ms, past the 16 of its
reported 0.32 s), and a period is at most half the buffer, so twice the reported input latency covers the
whole first pass: that much of a new stream is heard as silence.
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import threading
import time
from typing import Any

import numpy as np

from tcccd.plugins.capture.playback import PlaybackQueue

STALL_S = 2.0  # no callback this long while the stream should run: the device is gone
CLOSE_WAIT_S = 1.0
CLOSING: set[threading.Thread] = set()  # closes still blocked in PortAudio: no re-initialisation until they end
START_S = 6.0  # a first callback may take this long (PulseAudio's ALSA plugin: ~1.5 s here)
FIRST_PASS_LATENCIES = 2  # the host buffer is at most twice the input latency PortAudio reports


class NoDevice(Exception):
    """The named device is not there (unplugged, no sound server, no card)."""


def _rescan(sd: Any) -> None:
    """PortAudio lists devices once, at initialisation: re-initialise so a plugged-in headset is seen.

    Not while a close is still stuck inside PortAudio: terminating under it would block as well."""
    for closer in list(CLOSING):
        if not closer.is_alive():
            CLOSING.discard(closer)
    if CLOSING:
        return
    with contextlib.suppress(Exception):
        sd._terminate()
    sd._initialize()


def find_device(sd: Any, name: str) -> tuple[int, dict[str, Any]]:
    """Index and description of the first device with a microphone whose name is, or contains, `name`: one with
    an output too first (the read-back plays there), else one with a microphone alone."""
    devices = list(sd.query_devices())
    heard = [(i, d) for i, d in enumerate(devices) if d["max_input_channels"] > 0]
    for match in (lambda d: d["name"] == name, lambda d: name in d["name"]):
        for speaker in (True, False):
            for index, device in heard:
                if match(device) and (device["max_output_channels"] > 0) == speaker:
                    return index, device
    names = ", ".join(repr(d["name"]) for _, d in heard) or "none"
    raise NoDevice(f"no audio device named {name!r} with a microphone (found: {names})")


class DuplexDevice:
    def __init__(self, name: str, block_ms: int, buffer_blocks: int, playback: PlaybackQueue, wake_fd: int,
                 latency_ms: int = 100, rate_hz: int | None = None, wake_blocks: int = 1, quiet_peak: float = 0.0,
                 hangover_blocks: int = 0) -> None:
        self.name = name
        self.wake_blocks = wake_blocks
        self.quiet_peak = quiet_peak  # 0: every block counts as sound (the stage is woken every wake_blocks)
        self.hangover_blocks = hangover_blocks
        self.sound_blocks_left = 0  # blocks still to come at the chunk pace since the last sound
        self.requested_rate_hz = rate_hz
        self.latency_ms = latency_ms
        self.output_latency_s = 0.0
        self.block_ms = block_ms
        self.playback = playback
        self.wake_fd = wake_fd
        self.blocks: collections.deque[tuple[np.ndarray, np.ndarray]] = collections.deque(maxlen=buffer_blocks)
        self.overruns = 0
        self.rate_hz = 0
        self.description = ""
        self.last_callback_at = 0.0
        self.opened_at = 0.0
        self.unfilled_blocks = 0  # blocks still to come from the buffer's initial content: heard as silence
        self.has_speaker = False
        self._stream: Any = None
        self._failed: str | None = None

    def open(self) -> None:
        """Open and start the stream; raises NoDevice when the device cannot be used.

        First with PortAudio's current device list (cheap: a stream that stopped on an xrun comes back at
        once), then after a rescan (a headset plugged in since)."""
        import sounddevice as sd

        try:
            self._open(sd)
        except NoDevice:
            _rescan(sd)
            self._open(sd)

    def _open(self, sd: Any) -> None:
        try:
            index, info = find_device(sd, self.name)
            self.rate_hz = self.requested_rate_hz or int(info["default_samplerate"])
            out_channels = min(2, int(info["max_output_channels"]))
            self.has_speaker = out_channels > 0
            common = {"samplerate": self.rate_hz, "dtype": "float32", "blocksize": self.rate_hz * self.block_ms // 1000,
                      "latency": self.latency_ms / 1000, "finished_callback": self._finished}
            if self.has_speaker:
                self._stream = sd.Stream(device=(index, index), channels=(1, out_channels), callback=self._callback,
                                         **common)
                in_latency_s, out_latency_s = self._stream.latency
            else:
                self._stream = sd.InputStream(device=index, channels=1, callback=self._heard_only, **common)
                in_latency_s, out_latency_s = self._stream.latency, 0.0
            first_pass_s = FIRST_PASS_LATENCIES * float(in_latency_s)
            self.unfilled_blocks = math.ceil(first_pass_s * self.rate_hz / self._stream.blocksize)
            self._stream.start()
            self.output_latency_s = float(out_latency_s)
        except NoDevice:
            raise
        except Exception as exc:  # noqa: BLE001 - PortAudio reports a missing or busy device in several types
            self.close()
            raise NoDevice(f"audio device {self.name!r} could not be opened: {exc}") from None
        self.description = str(info["name"])
        self.opened_at = time.monotonic()
        self.last_callback_at = 0.0
        self._failed = None

    def _callback(self, indata: np.ndarray, outdata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        played = self.playback.take(frames)
        outdata[:] = played[:, None]
        self._heard(indata, played, frames, status)

    def _heard_only(self, indata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        """The callback of a microphone with no speaker: nothing was played."""
        self._heard(indata, np.zeros(frames, np.float32), frames, status)

    def _heard(self, indata: np.ndarray, played: np.ndarray, frames: int, status: Any) -> None:
        if status.input_overflow:
            self.overruns += 1
        if len(self.blocks) == self.blocks.maxlen:
            self.overruns += 1  # the stage fell behind: the oldest block is dropped, and counted
        if self.unfilled_blocks > 0:
            self.unfilled_blocks -= 1
            heard = np.zeros(frames, np.float32)
        else:
            heard = indata[:, 0].copy()
        self.blocks.append((heard, played))
        self.last_callback_at = time.monotonic()
        if heard.max(initial=0.0) >= self.quiet_peak or -heard.min(initial=0.0) >= self.quiet_peak:
            self.sound_blocks_left = self.hangover_blocks + 1
        elif self.sound_blocks_left:
            self.sound_blocks_left -= 1
        # a chunk's worth of sound (silence waits for the worker's poll), or barge-in watch
        if (self.sound_blocks_left and len(self.blocks) >= self.wake_blocks) or self.playback.playing:
            with contextlib.suppress(OSError):
                os.eventfd_write(self.wake_fd, 1)

    def _finished(self) -> None:
        self._failed = self._failed or "the audio stream stopped"

    def lost(self, now: float) -> str | None:
        """Why the device is gone, or None while it delivers audio."""
        if self._stream is None:
            return "not open"
        if self._failed:
            return self._failed
        if not self.last_callback_at and now - self.opened_at > START_S:
            return f"{self.name!r} opened but delivered no audio in {START_S:g} s"
        if self.last_callback_at and now - self.last_callback_at > STALL_S:
            return f"no audio from {self.name!r} for {now - self.last_callback_at:.1f} s"
        return None

    def silent_for(self, now: float) -> float | None:
        """Seconds since the open stream last delivered audio; None when it is not open or not delivering yet (a
        new stream's first audio is `lost`'s business, after START_S)."""
        if self._stream is None or not self.last_callback_at:
            return None
        return now - self.last_callback_at

    def close(self) -> None:
        """Stop the stream without waiting on it: PortAudio's abort can block for good on a vanished device
        (a PulseAudio server that died), so it runs on a thread of its own and the stage moves on."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        self._failed = "closed"
        closer = threading.Thread(target=_close_stream, args=(stream,), name="capture-close", daemon=True)
        closer.start()
        closer.join(CLOSE_WAIT_S)
        if closer.is_alive():
            CLOSING.add(closer)


def _close_stream(stream: Any) -> None:
    with contextlib.suppress(Exception):
        stream.abort()
    with contextlib.suppress(Exception):
        stream.close()
