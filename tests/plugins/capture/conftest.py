"""The virtual microphone fixture for every capture test: a private PulseAudio at 48 kHz (PipeWire's default, many
USB headsets' only rate) and at 44.1 kHz, default latency, each test run at both."""

from __future__ import annotations

import pytest

from tcccd.plugins.capture.virtual_mic import pulse_available, running_pulse


@pytest.fixture(params=[48000, 44100], ids=["48k", "44k1"])
def pulse(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    if not pulse_available():
        pytest.skip("needs pulseaudio, pulseaudio-utils and libasound2-plugins (scripts/system-deps.sh)")
    with running_pulse(request.param) as server:
        monkeypatch.setenv("PULSE_SERVER", server.server)
        yield server
