"""The kit's microphone end to end: a virtual microphone (PulseAudio null sink) heard at real-time pace,
transcripts on the events socket with no client attached, mute, unplug and replug, speak --play, the journal."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tcccd.plugins.capture.virtual_mic import pulse_available, running_pulse
from tests.support.daemon import REPO

SAMPLE = REPO / "tests" / "data" / "espeak-samples" / "medevac.wav"
ASR = {"name": "asr", "plugin": "whisper", "max_queue": 512, "params": {"backend": "torch", "beam_size": 1}}
MIC = {"name": "mic", "plugin": "capture", "params": {"retry_initial_s": 0.2, "retry_max_s": 1.0}}
ROUTES = {"transcribe": ["asr"], "stream": ["asr"], "capture.mute": ["mic"], "capture.unmute": ["mic"]}

needs_pulse = pytest.mark.skipif(not pulse_available(), reason="needs pulseaudio (scripts/system-deps.sh)")


def mic_transcripts(subscription, timeout_s: float, quiet_s: float = 3.0) -> list[dict]:
    """Final mic transcripts heard until none came for quiet_s (or timeout_s passed)."""
    got: list[dict] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        event = subscription.next(0.2)
        if event is None:
            continue
        topic, message = event
        if topic == "transcript" and message.data.get("source") == "mic" and not message.data.get("partial"):
            got.append(message.data)
            deadline = min(deadline, time.monotonic() + quiet_s)
    return got


def capture_health(report: dict) -> dict:
    return next(s["plugin_health"] for s in report["stages"] if s["name"] == "mic")


def sample_heard(client, subscription, pulse) -> list[dict]:
    """The sample played once into the microphone, and the transcripts of it (no second chance: a stream that
    stopped around it lost words, which is the product's fault to fix, not the test's to hide)."""
    time.sleep(2.0)  # the device's first audio, and the SUB socket joining
    pulse.play_file(SAMPLE).wait()
    heard = mic_transcripts(subscription, 60)
    assert heard, f"nothing heard; the microphone: {capture_health(client.status().to_data())}"
    return heard


@needs_pulse
@pytest.mark.parametrize("rate_hz", [48000, 44100], ids=["48k", "44k1"])
def test_microphone_to_subscriber_mute_unplug_and_the_journal(start_daemon, rate_hz):
    with running_pulse(rate_hz) as pulse:
        daemon = start_daemon([MIC, ASR], ROUTES, env={"PULSE_SERVER": pulse.server})
        daemon.wait_for(lambda r: r["state"] == "healthy" and capture_health(r).get("capture") == "listening",
                        timeout_s=180)
        with daemon.client() as client:
            subscription = client.subscribe(("transcript",))
            heard = sample_heard(client, subscription, pulse)
            assert heard and "medevac" in " ".join(t["text"] for t in heard).lower()
            assert all(isinstance(t["journal_seq"], int) for t in heard)

            muted = daemon.cli("mute")
            assert muted.returncode == 0 and muted.stdout.strip() == "microphone muted"
            daemon.wait_for(lambda r: capture_health(r)["capture"] == "muted")  # status is refreshed by heartbeat
            pulse.play_file(SAMPLE).wait()
            assert mic_transcripts(subscription, 8) == []
            assert daemon.cli("unmute").returncode == 0

            pulse.stop()  # the headset is unplugged
            unplugged = daemon.wait_for(lambda r: capture_health(r)["capture"] == "no_device")
            # a kit without its microphone is not healthy, and says why; everything else keeps serving
            assert unplugged["state"] == "degraded" and "no microphone" in capture_health(unplugged)["degraded_reason"]
            assert next(s for s in unplugged["stages"] if s["name"] == "asr")["state"] == "ready"
            pulse.start()
            daemon.wait_for(lambda r: capture_health(r)["capture"] == "listening", timeout_s=60)
            assert "medevac" in " ".join(t["text"] for t in sample_heard(client, subscription, pulse)).lower()
            subscription.close()

        record = json.loads(daemon.cli("transcripts", "--json").stdout)
        mic = [e for e in record if e["source"] == "mic"]
        assert len(mic) >= 2 and all("medevac" in e["text"].lower() for e in mic[:1])


def test_a_transcript_published_then_sigkill_is_in_the_journal_after_restart(start_daemon):
    daemon = start_daemon([ASR], {"transcribe": ["asr"]})
    daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=180)
    with daemon.client(timeout_s=120) as client:
        since = time.time()
        reply = client.transcribe(str(SAMPLE))
        os.kill(daemon.proc.pid, signal.SIGKILL)  # right after the reply, with no orderly shutdown
    daemon.proc.wait(10)
    assert "medevac" in reply.data["text"].lower()

    again = start_daemon([], {})  # same tmp_path, so the same state directory; the journal needs no stage
    again.wait_for(lambda r: r["state"] == "healthy")
    record = json.loads(again.cli("transcripts", "--json", "--since", str(since)).stdout)
    assert [e["text"] for e in record] == [reply.data["text"]] and record[0]["source"] == "client"
    with again.client() as client:
        missed = client.transcripts_since(since_ts=since)
    assert [e.text for e in missed] == [reply.data["text"]]


def test_since_accepts_epoch_iso_and_ages_and_says_what_it_wants():
    import argparse

    from tcccd.cli.capture import since_ts

    assert since_ts("1700000000") == 1700000000.0
    assert abs(since_ts("30m") - (time.time() - 1800)) < 5
    assert since_ts("2026-11-23T14:05") > 1.7e9
    with pytest.raises(argparse.ArgumentTypeError, match="epoch seconds, an ISO time"):
        since_ts("yesterday")


def test_status_screen_shows_the_microphone_and_the_record():
    from tcccd.cli.capture import status_lines
    from tcccd.wire.status import StatusReport
    from tests.support.reply_examples import example

    report = example("status")  # the microphone unplugged, the journal's disk full
    assert report["stages"][0]["plugin_health"]["no_device_reason"] == "unplugged"
    assert report["transcripts"]["last_error"] == "transcript not written: database or disk is full"
    lines = status_lines(StatusReport.from_data(report))
    assert "NO DEVICE (unplugged)" in lines[0] and "FAILING" in lines[1] and "disk is full" in lines[1]


@needs_pulse
def test_speak_play_goes_to_the_speaker_with_the_mic_gated_and_no_device_is_a_clear_error(start_daemon, tmp_path):
    piper = {"name": "piper", "plugin": "piper"}
    routes = {"speak": ["piper"], "speak.play": ["piper", "mic"]}
    with running_pulse() as pulse:
        daemon = start_daemon([MIC, piper], routes, env={"PULSE_SERVER": pulse.server})
        daemon.wait_for(lambda r: r["state"] == "healthy" and capture_health(r).get("capture") == "listening",
                        timeout_s=180)
        out = tmp_path / "said.wav"
        result = daemon.cli("speak", "--play", "TXA given at zero nine fifteen.", "-o", str(out))
        assert result.returncode == 0, result.stderr
        assert out.stat().st_size > 10_000  # the reply still carries the audio
        report = daemon.wait_for(lambda r: capture_health(r)["gated_s"] > 0 and not capture_health(r)["playing"])
        assert capture_health(report)["echo"] == "gate"
        pulse.stop()
        daemon.wait_for(lambda r: capture_health(r)["capture"] == "no_device")
        refused = daemon.cli("speak", "--play", "Tourniquet applied.")
        assert refused.returncode == 1 and "no audio device" in refused.stderr
        assert daemon.cli("speak", "Tourniquet applied.", "-o", str(out)).returncode == 0  # speaking still works
