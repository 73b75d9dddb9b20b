"""What systemd sees: READY, WATCHDOG, STATUS, and the SIGTERM / SIGHUP contract."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest
import yaml

from tcccd.wire.client import RequestFailed
from tests.support.daemon import SLOW


@pytest.fixture
def notify_socket(tmp_path: Path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.settimeout(0.2)
    yield sock
    sock.close()


def datagrams(sock: socket.socket, duration_s: float) -> list[tuple[float, str]]:
    """Every notification received over `duration_s`, with its arrival time."""
    got, end = [], time.monotonic() + duration_s
    while time.monotonic() < end:
        with contextlib.suppress(TimeoutError):
            got.append((time.monotonic(), sock.recv(4096).decode()))
    return got


def notify_env(sock: socket.socket, watchdog_usec: int = 1_000_000) -> dict[str, str]:
    return {"NOTIFY_SOCKET": sock.getsockname(), "WATCHDOG_USEC": str(watchdog_usec)}


def test_ready_only_after_plugins_are_ready_then_watchdog_cadence(start_daemon, notify_socket):
    started = time.monotonic()
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "params": {"setup_delay_s": 2.0}}],
                          {"echo": ["slow"]}, env=notify_env(notify_socket))
    received = datagrams(notify_socket, 5.0)
    ready = [(t, text) for t, text in received if "READY=1" in text]
    assert len(ready) == 1
    assert ready[0][0] - started >= 2.0
    assert "STATUS=healthy: profile field, 1/1 plugins ready" in ready[0][1]
    extends = [t for t, text in received if "EXTEND_TIMEOUT_USEC=" in text]
    assert extends and extends[0] < ready[0][0]  # the start timeout is stretched while set-up runs
    beats = [t for t, text in received if "WATCHDOG=1" in text]
    assert len(beats) >= 4
    gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
    assert max(gaps) < 1.0  # WATCHDOG_USEC=1 s: systemd must hear from us well within it
    assert daemon.cli("status").returncode == 0


def test_watchdog_stops_while_a_worker_is_frozen(start_daemon, notify_socket):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "hang_timeout_s": 60}], {"echo": ["slow"]},
                          env=notify_env(notify_socket))
    pid = daemon.wait_healthy()["stages"][0]["pid"]
    assert any("WATCHDOG=1" in text for _, text in datagrams(notify_socket, 1.5))
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(1.5)  # five missed heartbeats at 0.2 s
        datagrams(notify_socket, 0.3)  # what was sent before the grace ran out
        assert not any("WATCHDOG=1" in text for _, text in datagrams(notify_socket, 3.0))
    finally:
        os.kill(pid, signal.SIGCONT)
    assert any("WATCHDOG=1" in text for _, text in datagrams(notify_socket, 2.0))


def test_watchdog_goes_on_while_a_worker_does_long_work(start_daemon, notify_socket):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"echo": ["slow"]}, env=notify_env(notify_socket))
    daemon.wait_healthy()
    client = daemon.client(timeout_s=30)
    job = threading.Thread(target=client.call, args=("echo", {"delay_s": 4.0}))
    job.start()
    time.sleep(0.5)
    datagrams(notify_socket, 0.2)
    beats = [t for t, text in datagrams(notify_socket, 3.0) if "WATCHDOG=1" in text]
    job.join(10)
    assert len(beats) >= 4


def test_sigterm_drains_in_flight_request_then_exits_0(start_daemon, notify_socket):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW}], {"echo": ["slow"]}, env=notify_env(notify_socket))
    daemon.wait_healthy()
    result: dict = {}

    def slow_request() -> None:
        with daemon.client() as client:
            result["reply"] = client.call("echo", {"delay_s": 1.5, "n": 7})

    worker = threading.Thread(target=slow_request)
    worker.start()
    time.sleep(0.5)
    daemon.proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    with daemon.client() as client, pytest.raises(RequestFailed, match="stopping"):
        client.call("echo", {"n": 8})
    worker.join(10)
    assert result["reply"].data["n"] == 7
    assert daemon.proc.wait(15) == 0
    assert any("STOPPING=1" in text for _, text in datagrams(notify_socket, 0.5))


def test_sighup_takes_good_config_and_refuses_bad(start_daemon, notify_socket):
    daemon = start_daemon([{"name": "slow", "plugin": SLOW, "params": {"beam_size": 2}}], {"echo": ["slow"]},
                          env=notify_env(notify_socket, 60_000_000))
    daemon.wait_healthy()
    good = yaml.safe_load(daemon.config_path.read_text())
    good["pipeline"][0]["params"]["beam_size"] = 3
    daemon.config_path.write_text(yaml.safe_dump(good))
    daemon.proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    daemon.wait_healthy()
    with daemon.client() as client:
        assert client.call("echo").data["beam_size"] == 3
    received = "".join(text for _, text in datagrams(notify_socket, 0.5))
    assert "RELOADING=1" in received and "MONOTONIC_USEC=" in received

    bad = dict(good, pipeline=[{**good["pipeline"][0], "params": {"beam_size": "five"}}])
    daemon.config_path.write_text(yaml.safe_dump(bad))
    daemon.proc.send_signal(signal.SIGHUP)
    report = daemon.wait_for(lambda r: any("reload refused" in e["message"] for e in r["last_errors"]))
    assert report["state"] == "healthy"
    assert any("beam_size: expected an integer >= 1, got 'five'" in e["message"] for e in report["last_errors"])
    with daemon.client() as client:
        assert client.call("echo").data["beam_size"] == 3


def test_watchdog_stops_when_every_stage_has_failed_so_systemd_restarts_us(start_daemon, notify_socket):
    crash = {"name": "broken", "plugin": "tests.support.stage_plugins:CrashAtSetup",
             "restart": {"max_restarts": 0, "failed_retry_initial_s": 60}}
    daemon = start_daemon([crash], {"speak": ["broken"]}, env=notify_env(notify_socket))
    daemon.wait_for(lambda r: r["stages"][0]["state"] == "failed")
    datagrams(notify_socket, 0.6)  # what was sent before it failed
    later = [text for _, text in datagrams(notify_socket, 2.5)]
    assert not any("WATCHDOG=1" in text for text in later)
    assert daemon.proc.poll() is None  # still up, answering status, until systemd's watchdog acts
