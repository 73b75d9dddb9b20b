"""The capture stage on PipeWire (pipewire-pulse and WirePlumber on a private session bus), the sound server many
kits run, at 48 kHz (its default) and at 44.1 kHz, default latency: it opens at the graph's rate, hears what is
played, and a frozen graph makes it degraded with the reason, then it recovers."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from tcccd.kit.testing import PluginHarness
from tests.plugins.capture.test_capture import run_for, samples_of, speech_wav, wait_audio
from tests.plugins.capture.test_capture_health import poll_until


def test_hears_on_pipewire_at_the_graphs_rate(pipewire, tmp_path: Path) -> None:
    with PluginHarness("capture", {}, tmp_path) as h:
        wait_audio(h)
        player = pipewire.play_file(speech_wav())
        heard = samples_of(run_for(h, 6.0))
        player.wait(timeout=10)
        health = h.plugin.health()
    played, _ = sf.read(speech_wav(), dtype="float32")
    corr = np.correlate(heard, played[: 16000 * 3], mode="valid")
    assert np.max(np.abs(corr)) / (np.linalg.norm(played[: 16000 * 3]) * np.linalg.norm(heard) + 1e-9) > 0.3
    assert health["device_rate_hz"] == pipewire.rate_hz and health["rate_source"] == "sound server"
    assert health["reopens"] == 0 and "state" not in health, health


def test_a_frozen_pipewire_graph_is_reported_and_the_stage_recovers(pipewire, tmp_path: Path) -> None:
    with PluginHarness("capture", {"retry_initial_s": 0.2, "retry_max_s": 1.0}, tmp_path) as h:
        wait_audio(h)
        os.kill(pipewire.proc.pid, signal.SIGSTOP)
        try:
            frozen_at = time.monotonic()
            degraded, longest_s = poll_until(h, lambda r: r.get("state") == "degraded", 10)
            noticed_s = time.monotonic() - frozen_at
            later, longest_later_s = poll_until(h, lambda r: False, 4)
        finally:
            os.kill(pipewire.proc.pid, signal.SIGCONT)
        back, _ = poll_until(h, lambda r: r["capture"] == "listening" and "state" not in r, 30)
        assert wait_audio(h)
    assert degraded["degraded_reason"] and noticed_s < 3.0, degraded
    assert later["state"] == "degraded" and max(longest_s, longest_later_s) < 3.5, later
    assert "state" not in back and back["device_rate_hz"] == pipewire.rate_hz
