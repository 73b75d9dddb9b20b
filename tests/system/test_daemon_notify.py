"""`tcccd run` as systemd sees it: the datagrams on NOTIFY_SOCKET through start, watchdog, reload and stop."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TCCCD = Path(sys.executable).parent / "tcccd"
RECV_TIMEOUT_S = 60.0
POLL_S = 0.5
CONFIG = """
daemon:
  client_endpoint: ipc://{run}/client.sock
  events_endpoint: ipc://{run}/events.sock
  heartbeat_interval_s: 0.2
  drain_timeout_s: 5
profile: field
pipeline:
  - name: echo
    plugin: passthrough
routes:
  echo: [echo]
"""


class Systemd:
    """The systemd side of sd_notify: a datagram socket and the messages that reach it, in order."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(POLL_S)
        self.seen: list[dict[str, str]] = []
        self.proc: subprocess.Popen[str] | None = None

    def next(self) -> dict[str, str]:
        """The next datagram; fails at once if the daemon died instead of waiting out the timeout."""
        deadline = time.monotonic() + RECV_TIMEOUT_S
        while True:
            try:
                data = self.sock.recv(4096).decode()
                break
            except TimeoutError:
                if self.proc is not None and self.proc.poll() is not None:
                    output = self.proc.communicate(timeout=30)[0]
                    raise AssertionError(f"tcccd exited {self.proc.returncode}:\n{output}") from None
                if time.monotonic() > deadline:
                    raise
        message = dict(line.split("=", 1) for line in data.split("\n") if line)
        self.seen.append(message)
        return message

    def wait_for(self, key: str) -> dict[str, str]:
        """The first message carrying `key`; any before it are kept in `seen`."""
        while True:
            message = self.next()
            if key in message:
                return message


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Systemd]]:
    if not TCCCD.exists():
        pytest.skip(f"{TCCCD} missing: pip install -e . first")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = tmp_path / "tcccd.yaml"
    config.write_text(CONFIG.format(run=run_dir))
    systemd = Systemd(tmp_path / "notify.sock")
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify.sock"), "WATCHDOG_USEC": "1000000",
           "RUNTIME_DIRECTORY": str(run_dir), "STATE_DIRECTORY": str(tmp_path / "state"),
           "CACHE_DIRECTORY": str(tmp_path / "cache")}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen([str(TCCCD), "run", "--config", str(config)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    systemd.proc = proc
    yield proc, systemd
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(ValueError):  # already collected by Systemd.next
        proc.communicate(timeout=30)
    systemd.sock.close()


def test_ready_watchdog_reload_and_stop(daemon: tuple[subprocess.Popen[str], Systemd]) -> None:
    proc, systemd = daemon
    ready = systemd.wait_for("READY")
    assert "1/1 plugins ready" in ready["STATUS"]

    assert systemd.wait_for("WATCHDOG")["WATCHDOG"] == "1"
    first_ping_at = time.monotonic()
    systemd.wait_for("WATCHDOG")
    assert time.monotonic() - first_ping_at < 5, "pings keep coming at half of WATCHDOG_USEC"

    proc.send_signal(signal.SIGHUP)
    reloading = systemd.wait_for("RELOADING")
    assert int(reloading["MONOTONIC_USEC"]) > 0
    assert "1/1 plugins ready" in systemd.wait_for("READY")["STATUS"]

    proc.send_signal(signal.SIGTERM)
    assert systemd.wait_for("STOPPING")["STOPPING"] == "1"
    assert proc.wait(timeout=30) == 0


def test_invalid_config_exits_with_the_status_the_unit_does_not_restart(tmp_path: Path) -> None:
    if not TCCCD.exists():
        pytest.skip(f"{TCCCD} missing: pip install -e . first")
    config = tmp_path / "tcccd.yaml"
    config.write_text("pipeline:\n  - name: echo\n    plugin: no-such-plugin\n")
    result = subprocess.run([str(TCCCD), "run", "--config", str(config)], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "absent.sock")})
    assert result.returncode == 2
    assert "no-such-plugin" in result.stderr
    unit = (Path(__file__).resolve().parents[2] / "systemd" / "tcccd.service").read_text()
    assert "RestartPreventExitStatus=2" in unit
