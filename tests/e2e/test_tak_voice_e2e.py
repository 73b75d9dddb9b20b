"""The spoken TAK command through the kit's microphone: the medic dictates a casualty, says "Send nine line.", hears
the kit's read-back ("Nine line for casualty one: ... Say send to confirm.", through Piper to the speaker: the echo
gate keeps it out of the record), says "Send.", and a pytak receiver on loopback gets exactly one CASEVAC; a "Send
nine line." with no confirmation sends nothing. Everything the medic says is the kit's Piper voice (noise off:
the same audio every run) played into a virtual microphone (a private PulseAudio at 48 kHz, the capture stage at
its default latency), heard by the real Whisper stage. What Whisper wrote of each utterance is printed."""

from __future__ import annotations

import json
import time

import pytest

from tcccd.plugins.capture.virtual_mic import pulse_available, running_pulse
from tcccd.wire.tak import CardSendsReply
from tests.e2e.test_card_e2e import ASR, CARD, mic_health, mic_transcripts, wait_until_the_kit_is_quiet
from tests.support.card_audio import steady_speech
from tests.support.daemon import free_port
from tests.support.tak_peers import UdpReceiver
from tests.tak.conftest import medevac

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not pulse_available(), reason="needs pulseaudio (scripts/system-deps.sh)")]

CASUALTY = ["Gunshot wound to the left thigh, heavy bleeding.", "Evac category urgent. Litter."]
ASK, CONFIRM = "Send nine line.", "Send."
ROUTES = {"transcribe": ["asr"], "stream": ["asr"], "card.extract": ["card"], "speak.play": ["piper", "mic"]}


def the_kit(start_daemon, pulse, port: int):
    """Microphone (default latency), Whisper, the card, Piper reading back through the speaker; TAK to a UDP
    receiver on loopback."""
    tak = {"enabled": True, "url": f"udp+wo://127.0.0.1:{port}", "kit_uid": "kit-7", "gpsd": {"enabled": False},
           "fixed_point": {"lat": 34.05, "lon": -118.25, "ce_m": 20.0}}
    mic = {"name": "mic", "plugin": "capture", "params": {"retry_initial_s": 0.2}}
    daemon = start_daemon([mic, ASR, CARD, {"name": "piper", "plugin": "piper"}], ROUTES,
                          env={"PULSE_SERVER": pulse.server}, top={"tak": tak})
    daemon.wait_for(lambda r: r["state"] == "healthy" and mic_health(r).get("capture") == "listening", 300)
    time.sleep(2.0)
    return daemon


def say(pulse, tmp_path, name: str, wav: bytes) -> None:
    """The medic says it: played into the microphone, to the end."""
    path = tmp_path / f"{name}.wav"
    path.write_bytes(wav)
    pulse.play_file(path).wait()


def wait_for_the_read_back(daemon, timeout_s: float = 90.0) -> dict:
    """The kit read the CASEVAC back: it waits for 'send', and the speaker played the read-back to its end."""
    report = daemon.wait_for(lambda r: r["tak"]["awaiting_confirmation"], timeout_s)
    daemon.wait_for(lambda r: mic_health(r)["playing"] or not r["tak"]["awaiting_confirmation"], timeout_s)
    daemon.wait_for(lambda r: not mic_health(r)["playing"], timeout_s)
    time.sleep(0.5)  # the medic hears it end, then answers
    return report


def test_send_nine_line_is_read_back_and_sent_once_on_send_and_not_without_it(start_daemon, tmp_path):
    port = free_port()
    receiver = UdpReceiver(port)
    dictated, ask, confirm = steady_speech(CASUALTY), *steady_speech([ASK, CONFIRM])
    try:
        with running_pulse() as pulse:
            daemon = the_kit(start_daemon, pulse, port)
            for index, wav in enumerate(dictated):
                say(pulse, tmp_path, f"card{index}", wav)
                wait_until_the_kit_is_quiet(daemon, heard=index + 1)
            with daemon.client() as client:
                events = client.call("card.get").data["events"]

            say(pulse, tmp_path, "ask", ask)
            report = wait_for_the_read_back(daemon)
            assert report["tak"]["awaiting_confirmation"] == "nine line read back, waiting for 'send'"
            assert receiver.received() == []  # read back, not sent
            say(pulse, tmp_path, "confirm", confirm)
            [event] = receiver.wait_for(b"b-r-f-h-c", timeout_s=60)
            _, node, mists = medevac(event)
            assert set(mists) == {"ZMIST1"} and node.get("title").endswith(" C1")
            wait_until_the_kit_is_quiet(daemon, heard=len(dictated) + 2)  # "Sent to TAK."

            say(pulse, tmp_path, "ask-again", ask)  # and no confirmation
            wait_for_the_read_back(daemon)
            daemon.wait_for(lambda r: not r["tak"]["awaiting_confirmation"], timeout_s=60)
            wait_until_the_kit_is_quiet(daemon, heard=len(dictated) + 3)  # "Not confirmed. Nothing sent."
            record = mic_transcripts(daemon)
            with daemon.client() as client:
                sends = CardSendsReply.from_message(client.call("card.sends")).sends
                assert client.call("card.get").data["events"] == events  # no command is a fact on the card
        texts = [e["text"] for e in record]
        print(f"\nheard: {json.dumps(texts)}\nsent: {sends[0].summary if sends else None}")
        assert len(receiver.received(b"b-r-f-h-c")) == 1
        assert [(s.via, s.by, s.casualties, s.state) for s in sends] == [("voice", "medic", [1], "sent")]
        assert sends[0].summary.startswith("Nine line for casualty one: ")
        assert "CASEVAC not confirmed in time: nothing sent" in daemon.logs()
        assert len(record) == len(dictated) + 3, texts  # what the medic said; nothing of the kit's read-backs
    finally:
        receiver.close()
