"""The duplex device at PortAudio's boundary: what it hands the stage from the first blocks of a stream.

PortAudio over PulseAudio's ALSA plugin handed the first input latency's worth of blocks (16 of 20 ms at 0.32 s)
as the capture buffer's initial content: zeros in a fresh process, full-scale garbage in the test suite's
long-lived one (-1.0, -0.5: the capture level test read 24 to 1040 "clipped" samples after the capper's daemon
tests), and a few samples more where ALSA rounded its buffer up (18 on 2026-11-25). The stand-in below is that
PortAudio: it plays the callback exactly so, deterministically.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import numpy as np

from tcccd.plugins.capture.device import DuplexDevice
from tcccd.plugins.capture.playback import PlaybackQueue

RATE_HZ = 44100
BLOCK = RATE_HZ // 50
INPUT_LATENCY_S = 0.32
SPEECH = np.full(BLOCK, 0.25, np.float32)


ROUNDED_UP = 18  # samples ALSA's buffer held past the latency PortAudio reported (the fresh-clone run of 2026-11-25)


class StaleBufferStream:
    """A PortAudio stream whose input buffer starts full of old memory: `latency[0]` of it and the few samples ALSA
    rounded its buffer up by, then real audio."""

    def __init__(self, samplerate: int, blocksize: int, callback: Any, **_: Any) -> None:
        self.blocksize = blocksize
        self.latency = (INPUT_LATENCY_S, 0.34)
        self.callback = callback

    def start(self) -> None:
        status = SimpleNamespace(input_overflow=False)
        stale = round(INPUT_LATENCY_S * RATE_HZ / self.blocksize)
        for block in range(stale + 5):
            indata = np.full((self.blocksize, 1), -1.0 if block % 2 else -0.5, np.float32)
            if block == stale:
                indata[ROUNDED_UP:, 0] = SPEECH[ROUNDED_UP:]
            elif block > stale:
                indata[:, 0] = SPEECH
            self.callback(indata, np.zeros((self.blocksize, 2), np.float32), self.blocksize, None, status)

    def abort(self) -> None:
        pass

    def close(self) -> None:
        pass


def portaudio() -> SimpleNamespace:
    device = {"name": "default", "max_input_channels": 32, "max_output_channels": 32,
              "default_samplerate": float(RATE_HZ)}
    return SimpleNamespace(query_devices=lambda: [device], Stream=StaleBufferStream)


def test_the_buffers_initial_content_is_heard_as_silence_then_the_microphone() -> None:
    wake_fd = os.eventfd(0, os.EFD_NONBLOCK)
    device = DuplexDevice("default", 20, 100, PlaybackQueue(), wake_fd)
    try:
        device._open(portaudio())
        heard = [near for near, _ in device.blocks]
    finally:
        device.close()
        os.close(wake_fd)
    stale = round(INPUT_LATENCY_S * RATE_HZ / BLOCK) + 1  # and the block ALSA's rounding reaches into
    assert len(heard) == stale + 4
    assert all(not block.any() for block in heard[:stale])  # silence, never full-scale garbage
    assert all(np.array_equal(block, SPEECH) for block in heard[stale:])  # then every sample as captured


def _wakes_per_block(device: DuplexDevice, wake_fd: int, blocks: list[np.ndarray]) -> list[bool]:
    """Feed blocks to the callback as PortAudio would; for each, whether it woke the stage (the stage drains
    after each wake, as the worker does)."""
    status = SimpleNamespace(input_overflow=False)
    woke = []
    for block in blocks:
        device._callback(block[:, None], np.zeros((BLOCK, 2), np.float32), BLOCK, None, status)
        try:
            woke.append(os.eventfd_read(wake_fd) > 0)
            device.blocks.clear()
        except BlockingIOError:
            woke.append(False)
    return woke


def test_silence_waits_for_the_workers_poll_and_sound_wakes_the_stage_at_once() -> None:
    wake_fd = os.eventfd(0, os.EFD_NONBLOCK)
    quiet, loud = np.zeros(BLOCK, np.float32), np.full(BLOCK, 0.01, np.float32)  # loud: -40 dBFS
    device = DuplexDevice("default", 20, 100, PlaybackQueue(), wake_fd, wake_blocks=3,
                          quiet_peak=10 ** (-50 / 20), hangover_blocks=10)
    try:
        woke = _wakes_per_block(device, wake_fd, [quiet] * 20 + [loud] + [quiet] * 20)
        kept = len(device.blocks)
    finally:
        os.close(wake_fd)
    assert not any(woke[:20])  # 400 ms of silence: left for the worker's 0.25 s poll, not a wake every chunk
    assert woke[20]  # the first sound wakes the stage at once, with the silence before it (the pre-roll)
    assert woke[21:32] == [False, False, True] * 3 + [False, False]  # the pause after it at the chunk pace
    assert not any(woke[32:])  # then silence again
    assert kept == 41 - 30  # nothing is dropped: the blocks after the last wake wait for the next drain
