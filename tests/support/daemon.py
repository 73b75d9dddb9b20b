"""Run `tcccd run` as a subprocess with a test config and talk to it through the client only."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tcccd.wire.client import Client

REPO = Path(__file__).resolve().parents[2]
SLOW = "tests.support.stage_plugins:Slow"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_config(tmp_path: Path, pipeline: list[dict[str, Any]], routes: dict[str, list[str]],
                top: dict[str, Any] | None = None, **daemon: Any) -> dict[str, Any]:
    return {**(top or {}),
        "daemon": {
            "client_endpoint": f"tcp://127.0.0.1:{free_port()}",
            "events_endpoint": f"tcp://127.0.0.1:{free_port()}",
            "runtime_dir": str(tmp_path / "run"), "state_dir": str(tmp_path / "state"),
            "cache_dir": str(tmp_path / "cache"), "log_format": "json", "heartbeat_interval_s": 0.2, **daemon,
        },
        "pipeline": pipeline,
        "routes": routes,
    }


class DaemonProcess:
    def __init__(self, tmp_path: Path, config: dict[str, Any], env: dict[str, str] | None = None) -> None:
        self.config_path = tmp_path / "tcccd.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.endpoint = config["daemon"]["client_endpoint"]
        self.log_path = tmp_path / "daemon.log"
        full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "tcccd", "--config", str(self.config_path), "run"],
                                     stdout=subprocess.DEVNULL, stderr=self.log_path.open("wb"), env=full_env,
                                     cwd=REPO)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tcccd", "--config", str(self.config_path), *args],
                              capture_output=True, text=True, timeout=60, cwd=REPO)

    def client(self, timeout_s: float = 10.0) -> Client:
        return Client(self.endpoint, timeout_s=timeout_s)

    def wait_for(self, predicate: Any, timeout_s: float = 30.0) -> dict[str, Any]:
        """Poll status until predicate(report) holds; returns that report."""
        deadline = time.monotonic() + timeout_s
        last: dict[str, Any] = {}
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"daemon exited: {self.log_path.read_text()[-3000:]}"
            try:
                with Client(self.endpoint, timeout_s=2) as client:
                    last = client.status().to_data()
                if predicate(last):
                    return last
            except (ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"condition not reached in {timeout_s} s; last status: {last}")

    def wait_healthy(self) -> dict[str, Any]:
        return self.wait_for(lambda r: r["state"] == "healthy")

    def logs(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode
