"""The capture stage's health tells the truth: a frozen sound server, at either rate, makes it degraded with the
reason, without blocking the stage; it recovers when the server does."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tcccd.kit.testing import PluginHarness
from tests.plugins.capture.test_capture import run_for, wait_audio


def poll_until(h: PluginHarness, done, timeout_s: float) -> tuple[dict, float]:
    """Poll like the worker until done(health); the health then, and the longest single poll (s)."""
    longest, deadline = 0.0, time.monotonic() + timeout_s
    while True:
        started = time.monotonic()
        list(h.stage.poll())
        longest = max(longest, time.monotonic() - started)
        health = h.plugin.health()
        if done(health) or time.monotonic() > deadline:
            return health, longest
        time.sleep(0.02)


def test_a_frozen_sound_server_is_reported_within_seconds_and_recovers(pulse, tmp_path: Path) -> None:
    with PluginHarness("capture", {"retry_initial_s": 0.2, "retry_max_s": 1.0}, tmp_path) as h:
        wait_audio(h)
        run_for(h, 0.5)
        assert "state" not in h.plugin.health()
        os.kill(pulse.proc.pid, signal.SIGSTOP)
        try:
            frozen_at = time.monotonic()
            silent, _ = poll_until(h, lambda r: r.get("state") == "degraded", 10)
            noticed_s = time.monotonic() - frozen_at
            gone, longest_poll_s = poll_until(h, lambda r: r["capture"] == "no_device", 15)
            later, longest_later_s = poll_until(h, lambda r: False, 3)  # retries keep it degraded, none blocks
        finally:
            os.kill(pulse.proc.pid, signal.SIGCONT)
        back, _ = poll_until(h, lambda r: r["capture"] == "listening" and "state" not in r, 30)
        heard = wait_audio(h)
    assert silent["state"] == "degraded" and "delivered no audio" in silent["degraded_reason"], silent
    assert noticed_s < 3.0  # 1 s without audio, and the heartbeat's health is computed at each poll
    assert gone["state"] == "degraded" and "does not answer" in gone["degraded_reason"], gone
    assert later["state"] == "degraded" and later["capture"] == "no_device", later
    assert max(longest_poll_s, longest_later_s) < 3.5  # the stage never blocks on the frozen server for long
    assert "state" not in back and back["device_rate_hz"] == pulse.rate_hz and heard


MIC = {"name": "mic", "plugin": "capture", "params": {"retry_initial_s": 0.2, "retry_max_s": 1.0}}
DICTATION = {"name": "asr", "plugin": "tests.support.stage_plugins:Dictation"}


def mic_stage(report: dict) -> dict:
    return next(s for s in report["stages"] if s["name"] == "mic")


def next_alert(subscription, kind: str, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        event = subscription.next(0.2)
        if event and event[0] == "alert" and event[1].data.get("kind") == kind:
            return event[1].data
    raise AssertionError(f"no {kind!r} alert in {timeout_s} s")


def test_the_daemon_reports_a_frozen_sound_server_exits_1_alerts_and_recovers(pulse, start_daemon) -> None:
    daemon = start_daemon([MIC, DICTATION], {"stream": ["asr"]}, env={"PULSE_SERVER": pulse.server})
    daemon.wait_for(lambda r: r["state"] == "healthy" and mic_stage(r)["plugin_health"].get("capture") == "listening",
                    timeout_s=60)
    assert daemon.cli("status").returncode == 0
    with daemon.client() as client:
        alerts = client.subscribe(("alert",))
        time.sleep(0.5)  # the subscription joins
        os.kill(pulse.proc.pid, signal.SIGSTOP)
        try:
            report = daemon.wait_for(lambda r: r["state"] == "degraded", timeout_s=15)
            screen = daemon.cli("status")
            told = next_alert(alerts, "stage_degraded", 10)
        finally:
            os.kill(pulse.proc.pid, signal.SIGCONT)
        daemon.wait_for(lambda r: r["state"] == "healthy" and mic_stage(r)["plugin_health"]["capture"] == "listening",
                        timeout_s=60)
        recovered = next_alert(alerts, "stage_recovered", 10)
        alerts.close()
    mic = mic_stage(report)
    assert mic["state"] == "degraded" and mic["plugin_health"]["degraded_reason"]
    assert next(s for s in report["stages"] if s["name"] == "asr")["state"] == "ready"  # the rest keeps serving
    assert screen.returncode == 1 and "DEGRADED" in screen.stdout, screen.stdout
    assert told["worker"] == "mic" and told["reason"] and recovered["worker"] == "mic"
    assert daemon.cli("status").returncode == 0


def test_a_capture_stage_without_a_device_is_degraded_and_a_kit_without_capture_is_healthy(start_daemon) -> None:
    absent = {**MIC, "params": {**MIC["params"], "device": "tcccd-test-no-such-device"}}
    daemon = start_daemon([absent, DICTATION], {"stream": ["asr"]})
    report = daemon.wait_for(lambda r: r["state"] != "starting" and mic_stage(r)["plugin_health"].get("capture"),
                             timeout_s=60)  # its first heartbeat
    screen = daemon.cli("status")
    daemon.stop()
    assert report["state"] == "degraded" and mic_stage(report)["state"] == "degraded"
    assert mic_stage(report)["plugin_health"]["degraded_reason"].startswith("no microphone: no audio device named")
    assert screen.returncode == 1 and "NO DEVICE" in screen.stdout
    without = start_daemon([DICTATION], {"stream": ["asr"]})
    without.wait_healthy()
    assert without.cli("status").returncode == 0
