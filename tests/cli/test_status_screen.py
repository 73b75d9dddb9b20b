"""`tcccd status` and `tcccd profile` read typed replies: what an operator sees for a kit capped on a low battery."""

from __future__ import annotations

import pytest

from tcccd.cli import status_screen
from tcccd.cli.telemetry import describe_profile
from tcccd.wire.model import ReplyInvalid
from tcccd.wire.replies import ProfileReply
from tcccd.wire.status import StatusReport
from tests.support.reply_examples import example


def test_the_screen_shows_why_the_profile_is_capped_and_what_needs_attention():
    report = StatusReport.from_data(example("status"))
    screen = status_screen.render(report)
    assert "DEGRADED" in screen and "(pid 4000, up 62 s)" in screen  # a kit without its microphone
    assert "profile   training  (set by a client; battery 15%" in screen
    assert "requested field (capped:" in screen
    assert "battery   15% Discharging; mains off" in screen and "hottest tj-thermal 61.0 C" in screen
    assert "power mode 15W (profile asks 7W: needs_reboot; 7W changes the GPU's TPC mask" in screen
    assert "budget 3815 MB, headroom 3729 MB; last: release mic at" in screen
    assert "capture   mic: NO DEVICE (unplugged); retrying" in screen
    assert "journal   FAILING: transcript not written: database or disk is full" in screen
    assert "card      mission 1, casualty 2 current; 2 card(s), 14 events, 3 unconfirmed; read-backs 8 (1 failed: " \
           "stage" in screen
    row = next(line for line in screen.splitlines() if line.startswith("mic "))
    assert row.split()[:6] == ["mic", "capture", "degraded", "0", "0/16", "0"] and "12.5" in row and "44.0" in row
    assert "worker asr: exited (SIGKILL)" in screen
    assert status_screen.exit_code(report) == status_screen.EXIT_DEGRADED


def test_a_microphone_that_does_not_hear_says_why_and_names_its_rate():
    data = example("status")
    data["stages"][0]["plugin_health"].update(
        capture="listening", no_device_reason=None, device_name="default", device_rate_hz=48000,
        rate_source="sound server", recent_reopens=3, reopens=5,
        degraded_reason="the audio stream stopped and was reopened 3 times in the last 60 s (last: no audio)")
    screen = status_screen.render(StatusReport.from_data(data))
    assert "capture   mic: listening on default at 48000 Hz (sound server), level -90.0 dBFS" in screen
    assert "capture   mic: DEGRADED: the audio stream stopped and was reopened 3 times in the last 60 s" in screen
    data["stages"][0]["plugin_health"].update(state="ready", degraded_reason=None)
    healthy = status_screen.render(StatusReport.from_data({**data, "state": "healthy"}))
    assert "DEGRADED" not in healthy and "at 48000 Hz (sound server)" in healthy


def test_a_microphone_with_no_speaker_says_read_back_is_off():
    data = example("status")
    data["stages"][0]["plugin_health"].update(
        capture="listening", no_device_reason=None, device_name="USB Microphone", device_rate_hz=48000,
        rate_source="device default", speaker=False, state="ready", degraded_reason=None)
    screen = status_screen.render(StatusReport.from_data(data))
    assert "capture   mic: listening on USB Microphone at 48000 Hz" in screen and "NO SPEAKER (read-back off)" in screen
    data["stages"][0]["plugin_health"].update(speaker=True)
    assert "NO SPEAKER" not in status_screen.render(StatusReport.from_data(data))


def test_a_capture_stage_whose_health_failed_is_shown_as_unknown_not_a_crash():
    data = example("status")
    data["stages"][0]["plugin_health"] = {"plugin": "capture", "health_error": "device query raised"}
    screen = status_screen.render(StatusReport.from_data(data))
    assert "capture   mic: state unknown (device query raised)" in screen


def test_a_degraded_or_starting_report_exits_1():
    for state in ("degraded", "starting", "stopping"):
        report = StatusReport.from_data({**example("status"), "state": state})
        assert status_screen.exit_code(report) == status_screen.EXIT_DEGRADED


def test_profile_line_says_what_runs_what_was_asked_and_what_is_installed():
    line = describe_profile(ProfileReply.from_data({**example("profile"), "override_until": 1.8e9}))
    assert line.startswith("training (set by a client; battery 15%") and "; requested field" in line
    assert "; override until " in line and line.endswith("available: emergency, field, training")


def test_a_report_missing_a_promised_field_is_refused_with_its_name():
    data = example("status")
    del data["memory"]["total_rss_bytes"]
    with pytest.raises(ReplyInvalid, match=r"data\.memory\.total_rss_bytes: required key is missing"):
        StatusReport.from_data(data)
