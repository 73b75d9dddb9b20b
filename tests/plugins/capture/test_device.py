"""The duplex device at PortAudio's boundary: what it hands the stage from the first blocks of a stream.

PortAudio over PulseAudio's ALSA plugin hands a new stream's first pass over its capture buffer partly from
memory nobody wrote: measured here after the memory tests had dirtied the heap (a 300 ms stream, PortAudio
reporting 0.32 s of input latency, periods of four 20 ms blocks), the second to fourth block of each of the
first five periods held freed heap memory (-0.5, -1.0 and small values at fixed offsets), up to the 18th block:
past the reported latency, since the buffer is that latency plus one period. The stand-in below is that
PortAudio: it plays the callback exactly so, deterministically.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import numpy as np

from tcccd.plugins.capture.device import DuplexDevice, find_device
from tcccd.plugins.capture.playback import PlaybackQueue

RATE_HZ = 44100
BLOCK = RATE_HZ // 50
INPUT_LATENCY_S = 0.32  # what PortAudio reports: the buffer less one period
PERIOD_BLOCKS = 4
BUFFER_BLOCKS = 20  # 0.4 s: the first pass over it is what the plugin never fully wrote
SPEECH = np.full(BLOCK, 0.25, np.float32)


def stale_block(index: int) -> np.ndarray:
    """Freed heap memory as it was read: a few values at fixed offsets, some at full scale."""
    block = np.zeros(BLOCK, np.float32)
    block[656:868:6] = -1.0 if index % 2 else -0.5
    block[43:391:9] = 790 / 32768
    return block


class StaleBufferStream:
    """A PortAudio stream whose first pass over its buffer is one written block per period, then stale ones."""

    def __init__(self, samplerate: int, blocksize: int, callback: Any, **_: Any) -> None:
        self.blocksize = blocksize
        self.latency = (INPUT_LATENCY_S, 0.34)
        self.callback = callback

    def start(self) -> None:
        status = SimpleNamespace(input_overflow=False)
        for index in range(BUFFER_BLOCKS + 20):
            if index >= BUFFER_BLOCKS:
                heard = SPEECH
            elif index % PERIOD_BLOCKS == 0:
                heard = np.zeros(BLOCK, np.float32)  # the block the plugin did copy: the sink's silence
            else:
                heard = stale_block(index)
            self.callback(heard[:, None].copy(), np.zeros((self.blocksize, 2), np.float32), self.blocksize, None,
                          status)

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
    assert len(heard) == BUFFER_BLOCKS + 20
    assert all(not block.any() for block in heard[:BUFFER_BLOCKS])  # silence, never the stale memory
    # then every sample as captured: at most one reported latency more is heard as silence (a 2x bound)
    first = next(i for i, block in enumerate(heard) if block.any())
    assert first <= round(2 * INPUT_LATENCY_S * RATE_HZ / BLOCK)
    assert all(np.array_equal(block, SPEECH) for block in heard[first:])


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


class Only48kStream(StaleBufferStream):
    """A USB headset's hw device: PortAudio refuses any rate but 48 kHz."""

    def __init__(self, samplerate: int, blocksize: int, callback: Any, **kwargs: Any) -> None:
        if samplerate != 48000:
            raise RuntimeError(f"Error opening Stream: Invalid sample rate [PaErrorCode -9997] ({samplerate})")
        super().__init__(samplerate, blocksize, callback, **kwargs)


def test_a_plain_alsa_device_that_only_takes_48k_opens_at_its_own_default() -> None:
    """No sound server decides for a hw device: the stage takes PortAudio's default for it (what ALSA says the
    device takes), not a rate of its own. Stand-in only: this machine has no sound card and no snd-aloop."""
    from tcccd.plugins.capture.sound_server import routes_to_server
    from tcccd.plugins.capture.stream_watch import StreamWatch

    headset = {"name": "USB Headset: Audio (hw:1,0)", "max_input_channels": 1, "max_output_channels": 2,
               "default_samplerate": 48000.0}
    portaudio = SimpleNamespace(query_devices=lambda: [headset], Stream=Only48kStream)
    choice = StreamWatch(None).choose_rate(None)
    wake_fd = os.eventfd(0, os.EFD_NONBLOCK)
    device = DuplexDevice("USB Headset", 20, 100, PlaybackQueue(), wake_fd, rate_hz=choice.rate_hz)
    try:
        device._open(portaudio)
    finally:
        device.close()
        os.close(wake_fd)
    assert not routes_to_server("USB Headset") and choice.source == "device default"
    assert device.rate_hz == 48000 and device.description == headset["name"]


class MicOnlyStream:
    """A USB microphone with no speaker: PortAudio opens it for input only (its callback has no output)."""

    def __init__(self, device: int, samplerate: int, blocksize: int, channels: int, callback: Any, **_: Any) -> None:
        self.blocksize = blocksize
        self.latency = 0.02  # an input stream reports one latency, not a pair
        self.callback = callback
        assert channels == 1

    def start(self) -> None:
        status = SimpleNamespace(input_overflow=False)
        for _ in range(40):
            self.callback(SPEECH[:, None].copy(), self.blocksize, None, status)

    def abort(self) -> None:
        pass

    def close(self) -> None:
        pass


def _refuse_duplex(**_: Any) -> None:
    raise AssertionError("a microphone with no output was opened as a duplex stream")


def test_a_microphone_with_no_speaker_is_heard_and_a_device_with_both_is_preferred() -> None:
    """A kit's USB microphone alone is a microphone, not 'no device'; where a device of the same name has an
    output too, that one is chosen (the read-back plays there)."""
    mic = {"name": "USB Microphone", "max_input_channels": 1, "max_output_channels": 0,
           "default_samplerate": 48000.0}
    wake_fd = os.eventfd(0, os.EFD_NONBLOCK)
    device = DuplexDevice("USB", 20, 100, PlaybackQueue(), wake_fd)
    try:
        device._open(SimpleNamespace(query_devices=lambda: [mic], Stream=_refuse_duplex, InputStream=MicOnlyStream))
        heard = [near for near, _ in device.blocks]
        played = [far for _, far in device.blocks]
    finally:
        device.close()
        os.close(wake_fd)
    assert not device.has_speaker and device.description == "USB Microphone" and device.rate_hz == 48000
    first = next(i for i, block in enumerate(heard) if block.any())  # after the first pass over its buffer
    assert len(heard) == 40 and first <= 2 and all(np.array_equal(block, SPEECH) for block in heard[first:])
    assert not any(block.any() for block in played)  # nothing plays on a microphone
    headset = {**mic, "name": "USB Headset", "max_output_channels": 2}
    assert find_device(SimpleNamespace(query_devices=lambda: [mic, headset]), "USB")[1] is headset
