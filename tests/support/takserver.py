"""A real TAK server on loopback for the tests and the bench: FreeTAKServer 2.2.1 from PyPI, in its own venv.

FreeTAKServer pins old libraries, so it never goes into tcccd's venv: install it
apart (docs/tak.md), in `.venv-takserver` at the repository root or where
$TCCCD_TAKSERVER_PYTHON points. Absent, `available()` says why and the tests
that need it skip. It starts as its own process group with every port on
127.0.0.1 (its data package services through tests/support/fts_launch.py), and
start() fails when any socket of it listens anywhere else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil

from tests.support.daemon import REPO, free_port

PYTHON = Path(os.environ.get("TCCCD_TAKSERVER_PYTHON", REPO / ".venv-takserver" / "bin" / "python"))
INSTALL = ("python3 -m venv .venv-takserver && .venv-takserver/bin/pip install freetakserver==2.2.1 "
           "opentelemetry-sdk==1.27.0 opentelemetry-api==1.27.0")
START_TIMEOUT_S = 120.0


def available() -> str | None:
    """None when FreeTAKServer can run here, else why not and how to install it."""
    if not PYTHON.exists():
        return f"no TAK server: {PYTHON} is missing (install: {INSTALL})"
    found = subprocess.run([str(PYTHON), "-c", "import FreeTAKServer"], capture_output=True, timeout=60)
    return None if found.returncode == 0 else f"FreeTAKServer does not import in {PYTHON} (install: {INSTALL})"


class FreeTakServer:
    def __init__(self, work: Path) -> None:
        self.cot_port = free_port()
        ports = {name: free_port() for name in ("ssl_cot", "dp", "ssl_dp", "api")}
        env = {**os.environ, "FTS_FIRST_START": "false", "FTS_DB_PATH": str(work / "fts.db"),
               "FTS_DP_ADDRESS": "127.0.0.1", "FTS_USER_ADDRESS": "127.0.0.1", "FTS_API_ADDRESS": "127.0.0.1",
               **{key: str(free_port()) for key in (
                   "FTS_ROUTING_PROXY_SUBSCRIBE_PORT", "FTS_ROUTING_PROXY_PUBLISHER_PORT",
                   "FTS_ROUTING_PROXY_SERVER_PORT", "FTS_INTEGRATION_MANAGER_PULLER_PORT",
                   "FTS_INTEGRATION_MANAGER_PUBLISHER_PORT", "FTS_FED_PORT")}}
        args = ["-CoTIP", "127.0.0.1", "-CoTPort", self.cot_port, "-SSLCoTIP", "127.0.0.1", "-SSLCoTPort",
                ports["ssl_cot"], "-DataPackageIP", "127.0.0.1", "-DataPackagePort", ports["dp"],
                "-SSLDataPackageIP", "127.0.0.1", "-SSLDataPackagePort", ports["ssl_dp"], "-RestAPIIP", "127.0.0.1",
                "-RestAPIPort", ports["api"]]
        self.log = (work / "fts.log").open("wb")
        self.proc = subprocess.Popen([str(PYTHON), str(REPO / "tests" / "support" / "fts_launch.py"),
                                      *map(str, args)], cwd=work, env=env, stdout=self.log, stderr=self.log,
                                     start_new_session=True)

    def start(self) -> FreeTakServer:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"FreeTAKServer exited ({self.proc.returncode}); see {self.log.name}"
            try:
                socket.create_connection(("127.0.0.1", self.cot_port), 0.5).close()
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError(f"FreeTAKServer's CoT port {self.cot_port} not open in {START_TIMEOUT_S} s")
        exposed = [f"{c.laddr.ip}:{c.laddr.port}" for c in psutil.net_connections("inet")
                   if c.status == psutil.CONN_LISTEN and c.pid in self.pids() and not c.laddr.ip.startswith("127.")]
        assert not exposed, f"FreeTAKServer listens beyond loopback: {exposed}"
        return self

    def pids(self) -> set[int]:
        return {p.pid for p in psutil.process_iter() if _pgid(p.pid) == self.proc.pid}

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.log.close()


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None
