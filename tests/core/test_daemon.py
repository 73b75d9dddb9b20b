"""The daemon end to end: `tcccd run` in a subprocess, reached only through the client."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tcccd.wire.client import RequestFailed
from tcccd.wire.protocol import AudioFormat, Message
from tests.support.daemon import SLOW
from tests.support.rawclient import RawClient, header

ECHO = [{"name": "echo", "plugin": "passthrough"}]
PCM_1S = os.urandom(32000)


def test_audio_round_trip_through_passthrough(start_daemon):
    daemon = start_daemon(ECHO, {"echo": ["echo"]})
    daemon.wait_healthy()
    with daemon.client() as client:
        reply = client.call("echo", payload=PCM_1S, audio=AudioFormat("pcm_s16le", 16000, 1))
    assert reply.final and reply.type == "echo"
    assert reply.payload == PCM_1S
    assert reply.audio == AudioFormat("pcm_s16le", 16000, 1)


def test_stream_through_two_stages(start_daemon):
    daemon = start_daemon([*ECHO, {"name": "slow", "plugin": SLOW}], {"stream": ["echo", "slow"]})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("stream", "s", audio=AudioFormat().to_dict()), PCM_1S[:8000])
        raw.send(header("stream", "s", seq=1), PCM_1S[8000:])
        raw.send(header("stream", "s", seq=2, final=True), b"")
        raw.collect(quiet_s=1.0, until=lambda: raw.finals("s"))
    replies = raw.replies["s"]
    assert [m["_payload"] for m in replies if m["_payload"]] == [PCM_1S[:8000], PCM_1S[8000:]]
    assert replies[-1] is raw.final("s")


def test_sigkill_of_worker_mid_request_errors_that_request_then_recovers(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "restart": {"backoff_initial_s": 0.1}}],
                          {"echo": ["slow"]})
    pid = daemon.wait_healthy()["stages"][0]["pid"]
    threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as failure:
            client.call("echo", {"delay_s": 5})
        assert failure.value.code == "worker_lost"
        assert "SIGKILL" in str(failure.value)
        report = daemon.wait_for(lambda r: r["stages"][0]["state"] in ("ready", "degraded")
                                 and r["stages"][0]["pid"] != pid)
        assert report["stages"][0]["restarts"] == 1
        assert client.call("echo", {"n": 2}).data["n"] == 2


def test_plugin_that_crashes_at_setup_leaves_daemon_up_and_degraded(start_daemon):
    crash = {"name": "broken", "plugin": "tests.support.stage_plugins:CrashAtSetup",
             "restart": {"max_restarts": 2, "backoff_initial_s": 0.05}}
    daemon = start_daemon([*ECHO, crash], {"echo": ["echo"], "speak": ["broken"]})
    report = daemon.wait_for(lambda r: any(s["state"] == "failed" for s in r["stages"]))
    broken = next(s for s in report["stages"] if s["name"] == "broken")
    assert broken["restarts"] == 2
    assert "model file is corrupt" in broken["last_error"]
    assert report["state"] == "degraded"
    with daemon.client() as client:
        assert client.call("echo", payload=b"ok").payload == b"ok"
        with pytest.raises(RequestFailed) as failure:
            client.call("speak", {"text": "hello"})
    assert failure.value.code == "stage_failed" and "broken" in str(failure.value)
    assert daemon.cli("status").returncode == 1


def test_bad_request_gets_error_and_stage_keeps_serving(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"echo": ["slow"]})
    daemon.wait_healthy()
    with daemon.client() as client:
        with pytest.raises(RequestFailed, match="bad input: expected something else"):
            client.call("echo", {"bad": True})
        with pytest.raises(RequestFailed, match="model exploded"):
            client.call("echo", {"fail": True})
        with pytest.raises(RequestFailed, match="cannot be sent"):
            client.call("echo", {"unencodable": True})
        assert client.call("echo", {"n": 1}).data["n"] == 1
        report = client.status().to_data()
    assert report["stages"][0]["restarts"] == 0
    assert "cannot be sent" in report["stages"][0]["last_error"]


def test_missing_plugin_error_names_it_and_how_to_enable(start_daemon):
    daemon = start_daemon(ECHO, {"echo": ["echo"]})
    daemon.wait_healthy()
    with daemon.client() as client, pytest.raises(RequestFailed) as failure:
        client.transcribe(b"RIFF")
    assert failure.value.code == "no_route"
    assert "'whisper'" in str(failure.value) and "routes" in str(failure.value)


def test_deadline_gives_exactly_one_error_reply(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"echo": ["slow"]})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("echo", "late", final=True, deadline_s=0.5, data={"delay_s": 2}))
        raw.collect(quiet_s=3.0, until=lambda: raw.finals("late"))  # the plugin's own answer comes at 2 s
    assert raw.final("late")["data"]["code"] == "deadline_exceeded"
    assert len(raw.replies["late"]) == 1
    report = daemon.wait_healthy()
    assert report["counters"]["late_outputs"] == 1
    with daemon.client() as client:
        assert client.call("echo", {"n": 3}).data["n"] == 3


def test_full_queue_answers_busy_and_loses_nothing_accepted(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "max_queue": 2}], {"echo": ["slow"]})
    daemon.wait_healthy()
    with daemon.client() as client:
        ids = []
        for n in range(4):
            message = Message("echo", data={"delay_s": 0.3, "n": n}, final=True)
            client.send(message)
            ids.append(message.id)
        outcomes = {}
        for request_id in ids:
            try:
                outcomes[request_id] = list(client.replies(request_id, 10))[-1].data["n"]
            except RequestFailed as exc:
                outcomes[request_id] = exc.code
        report = client.status().to_data()
    assert list(outcomes.values()) == [0, 1, "busy", "busy"]
    assert report["stages"][0]["busy_rejections"] == 2


def test_live_audio_dropped_when_behind_is_counted_and_reported(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "max_queue": 1, "params": {"delay_s": 0.3}}],
                          {"stream": ["slow"]})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        for seq in range(4):
            raw.send(header("stream", "s", seq=seq, audio=AudioFormat().to_dict()), b"\0\0" * 160)
        raw.send(header("stream", "s", seq=4, final=True), b"")
        raw.collect(quiet_s=1.0, until=lambda: raw.finals("s"))
    replies = raw.replies["s"]
    busy = [m for m in replies if m["type"] == "error" and m["data"]["code"] == "busy"]
    assert busy and all(not m.get("final") for m in busy)
    assert daemon.wait_healthy()["stages"][0]["dropped_audio_chunks"] == len(busy)
    assert replies[-1] is raw.final("s")


def test_hung_worker_is_killed_and_replaced(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "hang_timeout_s": 1.0,
                            "restart": {"backoff_initial_s": 0.1}}], {"hang": ["slow"], "echo": ["slow"]})
    pid = daemon.wait_healthy()["stages"][0]["pid"]
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as failure:
            client.call("hang", deadline_s=1.0)
        assert failure.value.code == "deadline_exceeded"
        report = daemon.wait_for(lambda r: r["stages"][0]["pid"] != pid and r["stages"][0]["state"] != "restarting")
        assert "hung: still busy with request" in report["stages"][0]["last_error"]
        assert client.call("echo", {"n": 4}).data["n"] == 4


def test_long_job_within_its_deadline_is_not_taken_for_a_hang(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "hang_timeout_s": 1.0}], {"echo": ["slow"]})
    daemon.wait_healthy()
    with daemon.client() as client:
        assert client.call("echo", {"delay_s": 3.0, "n": 6}, deadline_s=10).data["n"] == 6
        report = client.status().to_data()
    assert report["stages"][0]["restarts"] == 0 and report["state"] == "healthy"


def test_frozen_worker_is_killed_and_replaced(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "hang_timeout_s": 1.0,
                            "restart": {"backoff_initial_s": 0.1}}], {"echo": ["slow"]})
    pid = daemon.wait_healthy()["stages"][0]["pid"]
    os.kill(pid, signal.SIGSTOP)
    report = daemon.wait_for(lambda r: r["stages"][0]["pid"] != pid and r["stages"][0]["state"] != "restarting")
    assert "frozen: no heartbeat" in report["stages"][0]["last_error"]


def test_request_id_in_every_log_line_of_every_stage(start_daemon):
    daemon = start_daemon([*ECHO, {"name": "slow", "plugin": SLOW}], {"echo": ["echo", "slow"]})
    daemon.wait_healthy()
    with daemon.client() as client:
        message = Message("echo", data={"n": 5})
        list(client.request(message))
    time.sleep(0.3)
    lines = [json.loads(line) for line in daemon.logs().splitlines() if message.id in line]
    assert any(line.get("stage") == "slow" and line["event"] == "echoing" for line in lines)
    assert all(line["request_id"] == message.id for line in lines)


def test_profile_switch_reaches_plugins_and_subscribers(start_daemon, tmp_path: Path):
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "field.yaml").write_text("plugins: {}\n")
    (profiles / "training.yaml").write_text("plugins:\n  slow: {beam_size: 5}\n")
    (profiles / "broken.yaml").write_text("plugins:\n  slow: {beam_size: five}\n")
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"echo": ["slow"]}, top={"profiles_dir": str(profiles)})
    daemon.wait_healthy()
    with daemon.client() as client:
        events = client.subscribe(["profile"])
        time.sleep(0.3)
        assert client.call("echo").data["beam_size"] == 1
        assert client.profile_set("training", "operator").name == "training"
        topic, event = events.next(5)
        assert topic == "profile" and event.data["name"] == "training"
        assert client.call("echo").data["beam_size"] == 5
        with pytest.raises(RequestFailed, match="beam_size: expected an integer >= 1, got 'five'"):
            client.profile_set("broken")
        assert client.profile_get().name == "training"


def test_worker_without_torch_never_imports_it(start_daemon):
    daemon = start_daemon(ECHO, {"echo": ["echo"]})
    pid = daemon.wait_healthy()["stages"][0]["pid"]
    maps = Path(f"/proc/{pid}/maps").read_text()
    assert "libtorch" not in maps and "onnxruntime" not in maps


def test_stages_naming_one_worker_share_a_process(start_daemon):
    pipeline = [{"name": "echo", "plugin": "passthrough", "worker": "gpu"},
                {"name": "slow", "plugin": SLOW, "worker": "gpu"}]
    daemon = start_daemon(pipeline, {"echo": ["echo", "slow"]})
    report = daemon.wait_healthy()
    assert report["stages"][0]["pid"] == report["stages"][1]["pid"]
    with daemon.client() as client:
        assert client.call("echo", {"n": 9}).data == {"n": 9, "beam_size": 1}


def test_subscribers_receive_transcripts(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"transcribe": ["slow"]})
    daemon.wait_healthy()
    with daemon.client() as client:
        events = client.subscribe(["transcript"])
        time.sleep(0.3)  # a SUB socket misses what is published before it has connected
        reply = client.transcribe(PCM_1S, AudioFormat())
        topic, event = events.next(5)
    assert reply.data["text"] == "32000 bytes heard"
    assert topic == "transcript" and event.id == reply.id and event.data == reply.data


def test_route_through_a_disabled_stage_is_refused_and_daemon_stays_up(start_daemon):
    pipeline = [*ECHO, {"name": "off", "plugin": SLOW, "enabled": False}]
    daemon = start_daemon(pipeline, {"echo": ["echo", "off"], "ping2": ["echo"]})
    daemon.wait_healthy()
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as failure:
            client.call("echo", payload=b"x")
        assert failure.value.code == "stage_disabled" and "'off'" in str(failure.value)
        assert client.call("ping2", payload=b"y").payload == b"y"
