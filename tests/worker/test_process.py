"""A worker process driven by raw sockets standing in for the daemon: what it does with what the daemon sends.

The worker is a real `python -m tcccd.worker` process; the test binds the three ROUTER sockets the daemon would,
so it can send what the daemon never should (a garbled control frame) and read every frame that comes back.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq

from tcccd.wire.protocol import Message
from tests.support.daemon import REPO, SLOW

IDENTITY = b"w:1"
GARBLED = [IDENTITY, b"{not json"]


@pytest.fixture
def worker(tmp_path: Path):
    ctx = zmq.Context()
    socks = {}
    for role in ("data", "control", "heartbeat"):
        sock = ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.bind(f"ipc://{tmp_path}/{role}.sock")
        socks[role] = sock
    spec = {"worker": "w", "generation": 1, "profile": "field", "cpus": None, "log_level": "info",
            "log_format": "json", "cache_dir": str(tmp_path / "cache"), "state_dir": str(tmp_path / "state"),
            "stages": [{"name": "slow", "plugin": SLOW, "params": {}}],
            **{f"{role}_endpoint": f"ipc://{tmp_path}/{role}.sock" for role in socks}}
    spec_path = tmp_path / "worker.json"
    spec_path.write_text(json.dumps(spec))
    log = tmp_path / "worker.log"
    proc = subprocess.Popen([sys.executable, "-m", "tcccd.worker", str(spec_path)], stderr=log.open("wb"), cwd=REPO)
    assert _receive(socks["control"], 60).type == "ready"
    yield proc, socks, log
    proc.kill()
    proc.wait(5)
    ctx.destroy(0)


def _receive(sock: zmq.Socket, timeout_s: float) -> Message:
    assert sock.poll(timeout_s * 1000), "the worker sent nothing"
    identity, *frames = sock.recv_multipart()
    assert identity == IDENTITY
    return Message.from_frames(frames)


def _outputs(sock: zmq.Socket, request_id: str, timeout_s: float = 30) -> list[Message]:
    """Every data frame for one request until its ack (sent after the last output)."""
    got = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        message = _receive(sock, deadline - time.monotonic())
        if message.type == "ack":
            return got
        got.append(message)
    raise AssertionError(f"no ack for {request_id}; got {[m.type for m in got]}")


def test_a_garbled_control_frame_mid_request_neither_abandons_the_plugin_nor_kills_the_worker(worker):
    proc, socks, log = worker
    request = Message("echo", id="r1", stage="slow", final=True, data={"parts": 1, "delay_s": 0.6})
    socks["data"].send_multipart([IDENTITY, *request.to_frames()])
    time.sleep(0.2)  # the plugin is computing; the garbled frame is read between its two outputs
    socks["control"].send_multipart(GARBLED)
    outputs = _outputs(socks["data"], "r1")
    assert [(m.type, m.final) for m in outputs] == [("part", False), ("echo", True)]

    socks["control"].send_multipart(GARBLED)  # and again while idle
    time.sleep(0.5)
    assert proc.poll() is None, log.read_text()[-2000:]
    socks["data"].send_multipart([IDENTITY, *Message("echo", id="r2", stage="slow", final=True).to_frames()])
    assert [m.type for m in _outputs(socks["data"], "r2")] == ["echo"]

    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    garbled = [line for line in lines if line["event"] == "unreadable control message from the daemon"]
    assert len(garbled) == 2
    assert all("request_id" not in line for line in garbled), garbled  # the request's context is not leaked
    echoing = [line for line in lines if line["event"] == "echoing"]
    assert [line["request_id"] for line in echoing] == ["r1", "r2"]  # the plugin's own lines keep it

    socks["control"].send_multipart([IDENTITY, *Message("shutdown").to_frames()])
    assert proc.wait(10) == 0
