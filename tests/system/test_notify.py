"""sd_notify as systemd receives it: datagrams on the socket named by NOTIFY_SOCKET."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcccd.system.notify import Notifier, child_env

RECV_TIMEOUT_S = 2.0


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(RECV_TIMEOUT_S)
    yield sock, path
    sock.close()


def receive(sock: socket.socket) -> dict[str, str]:
    """One datagram, parsed the way systemd parses it: newline-separated KEY=VALUE."""
    data = sock.recv(4096).decode()
    return dict(line.split("=", 1) for line in data.split("\n") if line)


def nothing_pending(sock: socket.socket) -> bool:
    sock.settimeout(0.2)
    try:
        sock.recv(4096)
    except TimeoutError:
        return True
    finally:
        sock.settimeout(RECV_TIMEOUT_S)
    return False


def test_ready_status_and_stopping_reach_the_socket(notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path})
    assert notifier.enabled
    notifier.ready("profile field, 3/3 plugins ready")
    assert receive(sock) == {"READY": "1", "STATUS": "profile field, 3/3 plugins ready"}
    notifier.status("profile field, 2/3 plugins ready, last error: whisper hung")
    assert receive(sock) == {"STATUS": "profile field, 2/3 plugins ready, last error: whisper hung"}
    notifier.stopping()
    assert receive(sock) == {"STOPPING": "1"}


def test_identical_status_is_sent_once(notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path})
    notifier.status("all well")
    notifier.status("all well")
    assert receive(sock) == {"STATUS": "all well"}
    assert nothing_pending(sock)
    notifier.status("busy")
    assert receive(sock) == {"STATUS": "busy"}


def test_multiline_status_becomes_one_line(notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    Notifier({"NOTIFY_SOCKET": path}).status("whisper failed:\nCUDA error\n")
    assert receive(sock) == {"STATUS": "whisper failed: CUDA error"}


def test_reload_sequence_carries_monotonic_time(notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path})
    before_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    notifier.reloading()
    reloading = receive(sock)
    after_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    assert reloading["RELOADING"] == "1"
    assert before_us <= int(reloading["MONOTONIC_USEC"]) <= after_us
    notifier.ready_after_reload("profile emergency, 3/3 plugins ready")
    assert receive(sock) == {"READY": "1", "STATUS": "profile emergency, 3/3 plugins ready"}


def test_watchdog_and_extend_timeout(notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path})
    notifier.watchdog()
    assert receive(sock) == {"WATCHDOG": "1"}
    notifier.extend_timeout(90.5)
    assert receive(sock) == {"EXTEND_TIMEOUT_USEC": "90500000"}
    with pytest.raises(ValueError, match="positive"):
        notifier.extend_timeout(0)


def test_abstract_socket_address(tmp_path: Path) -> None:
    name = f"tcccd-test-{os.getpid()}-{tmp_path.name}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(b"\0" + name.encode())
        sock.settimeout(RECV_TIMEOUT_S)
        Notifier({"NOTIFY_SOCKET": "@" + name}).ready("up")
        assert receive(sock) == {"READY": "1", "STATUS": "up"}


def test_a_child_process_reaches_the_socket(notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    code = "from tcccd.system.notify import Notifier; Notifier().ready('from child')"
    env = {**os.environ, "NOTIFY_SOCKET": path}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert receive(sock) == {"READY": "1", "STATUS": "from child"}


def test_disabled_without_notify_socket() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    assert notifier.watchdog_interval_s is None
    notifier.ready("x")
    notifier.watchdog()
    notifier.reloading()
    notifier.stopping()
    assert notifier.last_error is None


def test_unreachable_socket_is_recorded_not_raised(tmp_path: Path) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone.sock")})
    notifier.ready("x")
    assert notifier.last_error is not None and "gone.sock" in notifier.last_error


def test_watchdog_interval_is_half_of_watchdog_usec(notify_socket: tuple[socket.socket, str]) -> None:
    _, path = notify_socket
    assert Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000000"}).watchdog_interval_s == 10.0
    mine = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000000", "WATCHDOG_PID": str(os.getpid())}
    assert Notifier(mine).watchdog_interval_s == 10.0


@pytest.mark.parametrize("extra", [
    {"WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "1"},
    {"WATCHDOG_USEC": "0"},
    {"WATCHDOG_USEC": "soon"},
    {},
])
def test_no_watchdog_interval_when_not_asked_for_this_process(
        notify_socket: tuple[socket.socket, str], extra: dict[str, str]) -> None:
    _, path = notify_socket
    assert Notifier({"NOTIFY_SOCKET": path, **extra}).watchdog_interval_s is None


def test_child_env_drops_notify_variables() -> None:
    env = {"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "1", "WATCHDOG_PID": "2", "PATH": "/usr/bin"}
    assert child_env(env) == {"PATH": "/usr/bin"}
