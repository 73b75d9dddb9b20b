"""The virtual microphone fixture for every capture test (and the daemon's end-to-end capture test)."""

from __future__ import annotations

import pytest

from tcccd.plugins.capture.virtual_mic import pulse_available, running_pulse


@pytest.fixture
def pulse(monkeypatch: pytest.MonkeyPatch):
    if not pulse_available():
        pytest.skip("needs pulseaudio, pulseaudio-utils and libasound2-plugins (scripts/system-deps.sh)")
    with running_pulse() as server:
        monkeypatch.setenv("PULSE_SERVER", server.server)
        yield server
