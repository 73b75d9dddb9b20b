"""`tcccd` as an operator uses it: status exit codes in each state, plugins, profile."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from tests.support.daemon import REPO, free_port

ECHO = [{"name": "echo", "plugin": "passthrough"}]


def tcccd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tcccd", *args], capture_output=True, text=True, timeout=60,
                          cwd=REPO)


def test_status_exit_codes_healthy_then_degraded(start_daemon):
    crash = {"name": "broken", "plugin": "tests.support.stage_plugins:CrashAtSetup",
             "restart": {"max_restarts": 0}}
    healthy = start_daemon(ECHO, {"echo": ["echo"]})
    healthy.wait_healthy()
    result = healthy.cli("status")
    assert result.returncode == 0 and "HEALTHY" in result.stdout and "passthrough" in result.stdout
    report = json.loads(healthy.cli("status", "--json").stdout)
    assert report["stages"][0]["state"] == "ready" and report["profile"]["name"] == "field"
    healthy.stop()
    degraded = start_daemon([*ECHO, crash], {"echo": ["echo"]})
    degraded.wait_for(lambda r: r["state"] == "degraded")
    result = degraded.cli("status")
    assert result.returncode == 1
    assert "DEGRADED" in result.stdout and "model file is corrupt" in result.stdout


def test_status_when_not_running_is_3_and_fast():
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    result = tcccd("--endpoint", endpoint, "status")
    assert result.returncode == 3
    assert "not running" in result.stdout
    assert tcccd("--endpoint", endpoint, "transcribe", "x.wav").returncode == 3


def test_status_when_something_else_answers_is_4():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        result = tcccd("--endpoint", f"tcp://127.0.0.1:{port}", "status", "--timeout", "1")
    assert result.returncode == 4
    assert "unknown" in result.stdout


def test_plugins_lists_builtins():
    result = tcccd("plugins")
    assert result.returncode == 0
    assert "passthrough" in result.stdout


def test_profile_get_and_set(start_daemon):
    daemon = start_daemon(ECHO, {"echo": ["echo"]})
    daemon.wait_healthy()
    assert daemon.cli("profile").stdout.startswith("field")
    assert daemon.cli("profile", "set", "emergency").stdout.startswith("emergency")
    refused = daemon.cli("profile", "set", "beach")
    assert refused.returncode == 1 and "profile 'beach' is not installed" in refused.stderr
