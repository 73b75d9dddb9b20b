"""The virtual microphones for every capture test: a private PulseAudio and a private PipeWire, each at 48 kHz
(PipeWire's default, many USB headsets' only rate) and at 44.1 kHz, default latency; a test that takes `pulse`
runs at both rates on PulseAudio, one that takes `pipewire` at both on PipeWire."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest

from tcccd.plugins.capture.virtual_mic import SoundServer, pulse_available, running_pulse
from tcccd.plugins.capture.virtual_pipewire import pipewire_available, running_pipewire

RATES = pytest.fixture(params=[48000, 44100], ids=["48k", "44k1"])


def serve(request: Any, monkeypatch: pytest.MonkeyPatch, available: Callable[[], bool],
          running: Callable[[int], AbstractContextManager[SoundServer]], needs: str) -> Iterator[SoundServer]:
    if not available():
        pytest.skip(f"needs {needs} (scripts/system-deps.sh)")
    with running(request.param) as server:
        monkeypatch.setenv("PULSE_SERVER", server.server)
        yield server


@RATES
def pulse(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[SoundServer]:
    yield from serve(request, monkeypatch, pulse_available, running_pulse,
                     "pulseaudio, pulseaudio-utils and libasound2-plugins")


@RATES
def pipewire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[SoundServer]:
    yield from serve(request, monkeypatch, pipewire_available, running_pipewire,
                     "pipewire, pipewire-pulse, wireplumber and dbus-daemon")
