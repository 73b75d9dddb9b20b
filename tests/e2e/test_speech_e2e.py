"""Speech out through the daemon: Piper for text, SNAC for Orpheus tokens, both as a client sees them."""

from __future__ import annotations

import numpy as np
import pytest

from tcccd.wire.client import RequestFailed

from ..plugins.snac.conftest import save_random_snac
from ..plugins.snac.test_tokens import random_tokens


def test_speak_text_and_tokens_through_the_daemon(start_daemon, tmp_path):
    weights_dir = save_random_snac(tmp_path / "snac_24khz")
    snac = {"name": "snac", "plugin": "snac", "params": {"weights_dir": str(weights_dir), "noise": False}}
    daemon = start_daemon([{"name": "piper", "plugin": "piper"}, snac],
                          {"speak": ["piper"], "speak.tokens": ["snac"]})
    daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=120)
    with daemon.client(timeout_s=60) as client:
        spoken = list(client.speak("Tourniquet applied. Heart rate one twenty."))
        tokens = random_tokens(12)
        decoded = list(client.speak_tokens([tokens[:30], tokens[30:]]))
        with pytest.raises(RequestFailed, match="0..4095|outside"):
            list(client.speak_tokens([[10 + 5000] * 7]))
    assert spoken[-1].final and sum(m.final for m in spoken) == 1
    pcm = np.frombuffer(b"".join(m.payload or b"" for m in spoken), dtype="<i2")
    assert spoken[0].audio.sample_rate_hz == 22050 and np.abs(pcm).max() > 1000
    samples = sum(len(m.payload or b"") // 2 for m in decoded)
    assert decoded[0].audio.sample_rate_hz == 24000
    assert samples == 12 * 2048  # every frame, the tail included
