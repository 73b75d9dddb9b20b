"""A real `python -m tcccd.worker` process with raw ROUTER sockets standing in for the daemon's.

A test sends what the daemon never should (a garbled control frame), reads every frame that comes back, or
names a daemon pid that is not the worker's parent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import zmq

from tcccd.wire.protocol import Message
from tests.support.daemon import REPO

IDENTITY = b"w:1"


class RawWorker:
    def __init__(self, tmp_path: Path, stages: list[dict[str, Any]], daemon_pid: int | None = None) -> None:
        self.ctx = zmq.Context()
        self.socks: dict[str, zmq.Socket] = {}
        for role in ("data", "control", "heartbeat"):
            sock = self.ctx.socket(zmq.ROUTER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.bind(f"ipc://{tmp_path}/{role}.sock")
            self.socks[role] = sock
        spec = {"worker": "w", "identity": IDENTITY.decode(), "profile": "field", "cpus": None, "log_level": "info",
                "daemon_pid": os.getpid() if daemon_pid is None else daemon_pid, "log_format": "json",
                "cache_dir": str(tmp_path / "cache"), "state_dir": str(tmp_path / "state"), "stages": stages,
                **{f"{role}_endpoint": f"ipc://{tmp_path}/{role}.sock" for role in self.socks}}
        spec_path = tmp_path / "worker.json"
        spec_path.write_text(json.dumps(spec))
        self.log = tmp_path / "worker.log"
        self.proc = subprocess.Popen([sys.executable, "-m", "tcccd.worker", str(spec_path)],
                                     stderr=self.log.open("wb"), cwd=REPO)

    def receive(self, role: str, timeout_s: float) -> Message:
        sock = self.socks[role]
        assert sock.poll(timeout_s * 1000), f"the worker sent nothing on {role}: {self.log.read_text()[-2000:]}"
        identity, *frames = sock.recv_multipart()
        assert identity == IDENTITY
        return Message.from_frames(frames)

    def send(self, role: str, message: Message) -> None:
        self.socks[role].send_multipart([IDENTITY, *message.to_frames()])

    def outputs(self, request_id: str, timeout_s: float = 30) -> list[Message]:
        """Every data frame for one request until its ack (sent after the last output)."""
        got = []
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            message = self.receive("data", deadline - time.monotonic())
            if message.type == "ack":
                return got
            got.append(message)
        raise AssertionError(f"no ack for {request_id}; got {[m.type for m in got]}")

    def log_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)
        self.ctx.destroy(0)
