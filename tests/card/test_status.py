"""`status` says where the casualty card stands: the current casualty, the cards, and what waits for review."""

from __future__ import annotations

import json

from tests.card.test_card_daemon import ROUTES, SAID, STAGES, say


def card_section(daemon, events: int) -> dict:
    return daemon.wait_for(lambda r: r["card"]["events"] >= events and r["card"]["waiting"] == 0)["card"]


def test_status_shows_the_cards_and_the_fields_waiting_for_review(start_daemon):
    daemon = start_daemon(STAGES, ROUTES)
    daemon.wait_healthy()
    before = daemon.wait_healthy()["card"]
    assert before["enabled"] and before["casualties"] == [] and before["events"] == 0

    say(daemon, *SAID, "Pulse seven hundred.")  # out of range: kept, flagged, shown unconfirmed
    card = card_section(daemon, 6)
    assert card["casualty"] == 2 and card["casualties"] == [1, 2]
    assert card["extracted"] == 5 and card["unconfirmed"] == 1 and card["skipped"] == 0
    screen = daemon.cli("status").stdout
    assert "card      mission 1, casualty 2 current; 2 card(s)" in screen and "1 unconfirmed" in screen, screen

    second = json.loads(daemon.cli("card", "--json").stdout)["cards"][1]
    pulse = next(column["pulse"] for column in second["c_vitals"] if column.get("pulse"))
    assert pulse["status"] == "unconfirmed" and pulse["event"]["what"]["rate"] == 700
    flagged = pulse["event"]["id"]
    assert daemon.cli("card", "confirm", flagged).returncode == 0
    assert daemon.wait_for(lambda r: r["card"]["unconfirmed"] == 0)["card"]["events"] == card["events"]


def test_status_says_when_no_card_stage_is_routed(start_daemon):
    daemon = start_daemon([STAGES[0]], {"transcribe": ["asr"]})
    card = daemon.wait_healthy()["card"]
    assert not card["enabled"] and card["events"] == 0
    assert "card      off (no card stage routed)" in daemon.cli("status").stdout


def test_a_kit_without_a_speaker_reads_nothing_back_and_says_why_once(start_daemon):
    """The capture stage reports no_device: no read-back goes to Piper only to fail at the speaker (the demo's
    status showed one error per entry before)."""
    mic = {"name": "mic", "plugin": "capture", "params": {"device": "no-such-sound-card"}}
    piper = {"name": "piper", "plugin": "piper"}
    daemon = start_daemon([*STAGES, mic, piper], {**ROUTES, "speak.play": ["piper", "mic"]},
                          top={"card": {"readback_sources": ["mic", "client"]}})  # the test's words come as files
    serving = lambda r: all(s["state"] == "ready" for s in r["stages"] if s["name"] != "mic")  # noqa: E731
    daemon.wait_for(lambda r: r["state"] == "degraded" and serving(r), timeout_s=120)  # no microphone: degraded
    say(daemon, *SAID[:2])
    card = card_section(daemon, 3)
    assert card["readbacks"] == 0 and card["readback_errors"] == 0 and card["readbacks_not_played"] == 2, card
    assert card["readback_last_error"].startswith("no speaker: ")
    report = daemon.wait_for(serving)
    assert not any("cannot play" in e["message"] for e in report["last_errors"]), report["last_errors"]
