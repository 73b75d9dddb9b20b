"""Recovery instead of failure: cooperative cancel, failed stages retried, profiles applied all or nothing."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import yaml

from tcccd.wire.client import RequestFailed
from tests.support.daemon import SLOW
from tests.support.rawclient import RawClient, header

PICKY = "tests.support.stage_plugins:Picky"


def test_deadline_overrun_stops_the_work_cooperatively_without_killing_the_worker(start_daemon):
    daemon = start_daemon([{"name": "coop", "plugin": "tests.support.stage_plugins:Cooperative",
                            "hang_timeout_s": 1.0}], {"work": ["coop"]})
    pid = daemon.wait_healthy()["stages"][0]["pid"]
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as failure:
            client.call("work", {"steps": 10_000}, deadline_s=0.5)  # 100 s of work
        assert failure.value.code == "deadline_exceeded"
        assert client.call("work", {"steps": 1, "n": 2}, deadline_s=5).data["n"] == 2
    report = daemon.wait_for(lambda r: "request" in (r["stages"][0]["plugin_health"]["last_error"] or ""))
    assert report["stages"][0]["pid"] == pid and report["stages"][0]["restarts"] == 0
    stopped_by = report["stages"][0]["plugin_health"]["last_error"]
    assert "passed its deadline" in stopped_by or "was cancelled" in stopped_by


def test_stage_that_spent_its_budget_comes_back_once_fixed(start_daemon, tmp_path: Path):
    ok_file = tmp_path / "model.bin"
    flaky = {"name": "flaky", "plugin": "tests.support.stage_plugins:CrashUntilFile",
             "params": {"ok_file": str(ok_file)},
             "restart": {"max_restarts": 1, "backoff_initial_s": 0.05, "failed_retry_initial_s": 0.2,
                         "failed_retry_max_s": 0.4}}
    daemon = start_daemon([flaky], {"echo": ["flaky"]})
    report = daemon.wait_for(lambda r: r["stages"][0]["state"] == "failed")
    assert "model.bin is missing" in report["stages"][0]["last_error"]
    with daemon.client() as client, pytest.raises(RequestFailed) as failure:
        client.call("echo", payload=b"x")
    assert failure.value.code == "stage_failed" and "next retry in" in str(failure.value)
    ok_file.write_bytes(b"weights")
    daemon.wait_for(lambda r: r["stages"][0]["state"] in ("ready", "degraded"))
    with daemon.client() as client:
        assert client.call("echo", payload=b"back").payload == b"back"


def test_profile_a_plugin_refuses_is_rolled_back_everywhere(start_daemon, tmp_path: Path):
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "field.yaml").write_text("plugins: {}\n")
    (profiles / "seven.yaml").write_text("plugins:\n  slow: {beam_size: 7}\n  picky: {beam_size: 7}\n")
    pipeline = [{"name": "slow", "plugin": SLOW, "restart": {"backoff_initial_s": 0.05}},
                {"name": "picky", "plugin": PICKY, "restart": {"backoff_initial_s": 0.05}}]
    daemon = start_daemon(pipeline, {"a": ["slow"], "b": ["picky"]}, top={"profiles_dir": str(profiles)})
    daemon.wait_healthy()
    with daemon.client() as client:
        with pytest.raises(RequestFailed) as failure:
            client.profile_set("seven")
        assert failure.value.code == "bad_profile"
        assert "rolled back" in str(failure.value) and "no beam-7 model installed" in str(failure.value)
        assert client.profile_get().name == "field"
        assert client.call("a").data["beam_size"] == 1  # the worker that took it got its old parameters back
        assert client.call("b").data["beam_size"] == 1
        picky_pid = next(s["pid"] for s in client.status().to_data()["stages"] if s["name"] == "picky")
    os.kill(picky_pid, signal.SIGKILL)
    daemon.wait_for(lambda r: all(s["state"] in ("ready", "degraded") and s["pid"] != picky_pid
                                  for s in r["stages"] if s["name"] == "picky"))
    with daemon.client() as client:
        assert client.call("b").data["beam_size"] == 1  # a restart uses the committed parameters only


def test_profile_names_are_installed_profiles_never_paths(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"a": ["slow"]})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        for n, name in enumerate(("../field", "/etc/passwd", "field.yaml", "nonexistent")):
            raw.send(header("profile.set", f"p{n}", final=True, data={"name": name}))
        raw.collect(until=lambda: all(raw.finals(f"p{n}") for n in range(4)))
    codes = [raw.final(f"p{n}")["data"]["code"] for n in range(4)]
    assert codes == ["bad_message", "bad_message", "bad_message", "bad_profile"]
    assert "not installed (available: emergency, field, training)" in raw.final("p3")["data"]["message"]


def test_busy_applies_to_every_hop_and_to_the_per_client_cap(start_daemon):
    pipeline = [{"name": "echo", "plugin": "passthrough"}, {"name": "slow", "plugin": SLOW, "max_queue": 1}]
    daemon = start_daemon(pipeline, {"chain": ["echo", "slow"], "direct": ["echo"]},
                          max_open_requests_per_client=3)
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("chain", "c1", final=True, data={"delay_s": 1.0}))
        time.sleep(0.3)
        raw.send(header("chain", "c2", final=True))
        raw.collect(until=lambda: raw.finals("c2"))
        assert raw.final("c2")["data"]["code"] == "busy" and "'slow'" in raw.final("c2")["data"]["message"]
        raw.send(header("chain", "c3", final=True, data={"delay_s": 1.0}))  # waits in echo->slow: busy too
        for n in range(3):
            raw.send(header("direct", f"d{n}", data={"n": n}))  # open streams count as open requests
        raw.collect(until=lambda: all(raw.finals(i) for i in ("c1", "c3", "d2")))
    assert raw.final("c1")["data"]["beam_size"] == 1  # the request that held the slow hop was served
    assert "max_open_requests_per_client=3" in raw.final("d2")["data"]["message"]


def test_replies_to_a_client_that_is_gone_are_counted(start_daemon):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"a": ["slow"]})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("a", "gone", final=True, data={"delay_s": 0.5}))
        time.sleep(0.1)
    report = daemon.wait_for(lambda r: r["counters"]["undeliverable_replies"] >= 1)
    assert report["requests_in_flight"] == 0


def test_reload_restarts_only_the_stages_whose_config_changed(start_daemon):
    pipeline = [{"name": "keep", "plugin": SLOW}, {"name": "change", "plugin": SLOW, "params": {"beam_size": 2}}]
    daemon = start_daemon(pipeline, {"a": ["keep"], "b": ["change"]})
    before = {s["name"]: s["pid"] for s in daemon.wait_healthy()["stages"]}
    config = yaml.safe_load(daemon.config_path.read_text())
    config["pipeline"][1]["params"]["beam_size"] = 3
    daemon.config_path.write_text(yaml.safe_dump(config))
    daemon.proc.send_signal(signal.SIGHUP)
    report = daemon.wait_for(lambda r: r["state"] == "healthy" and
                             {s["name"]: s["pid"] for s in r["stages"]}["change"] != before["change"])
    assert {s["name"]: s["pid"] for s in report["stages"]}["keep"] == before["keep"]
    with daemon.client() as client:
        assert client.call("b").data["beam_size"] == 3
