"""Read-back by source, through a running daemon: a recording sent as a file (`transcribe`, source client) goes on
the card silently; the config's `card.readback_sources` may turn a source on. Status is read from the daemon.

The kit here has no sound device (the capture stage reports no_device and the daemon is degraded), so a read-back
the daemon accepts is counted as not played (no speaker) rather than played: either way the count says whether the
entry was to be read aloud. The ASR is stood in by tests.support.scribe; the card stage, Piper and the capture stage
are the real ones.
"""

from __future__ import annotations

import time

import pytest

from tests.card.test_card_daemon import cards_now, say
from tests.support.scribe import SCRIBE

STAGES = [{"name": "asr", "plugin": SCRIBE}, {"name": "card", "plugin": "card"},
          {"name": "piper", "plugin": "piper"}, {"name": "mic", "plugin": "capture", "params": {"device": "nothere"}}]
ROUTES = {"transcribe": ["asr"], "card.extract": ["card"], "speak.play": ["piper", "mic"]}


@pytest.mark.parametrize("sources, to_read", [(None, 0), (["mic", "client"], 2)])
def test_files_and_other_clients_go_on_the_card_without_being_read_back(start_daemon, sources, to_read) -> None:
    daemon = start_daemon(STAGES, ROUTES, top={"card": {"readback_sources": sources}} if sources else None)
    serving = lambda r: all(s["state"] == "ready" for s in r["stages"] if s["name"] != "mic")  # noqa: E731
    daemon.wait_for(lambda r: r["state"] == "degraded" and serving(r), 300)  # no microphone: degraded
    say(daemon, "Tourniquet applied to the left leg at zero nine twelve.", "Pulse one twenty.")
    lines = cards_now(daemon, 2)
    assert any("tourniquet[left leg]" in line for line in lines) and any("pulse = 120" in line for line in lines)
    time.sleep(1.0)
    card = daemon.wait_for(lambda r: r["card"]["events"] >= 2, 30)["card"]
    assert card["readbacks"] + card["readbacks_not_played"] == to_read, card
