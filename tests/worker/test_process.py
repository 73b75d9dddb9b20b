"""A worker process driven by raw sockets standing in for the daemon: what it does with what the daemon sends.

The worker is a real `python -m tcccd.worker` process; the test binds the three ROUTER sockets the daemon would,
so it can send what the daemon never should (a garbled control frame) and read every frame that comes back.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tcccd.wire.protocol import Message
from tests.support.daemon import SLOW
from tests.support.raw_worker import IDENTITY, RawWorker

GARBLED = [IDENTITY, b"{not json"]


@pytest.fixture
def worker(tmp_path: Path):
    worker = RawWorker(tmp_path, [{"name": "slow", "plugin": SLOW, "params": {}}])
    assert worker.receive("control", 60).type == "ready"
    yield worker
    worker.close()


def test_a_garbled_control_frame_mid_request_neither_abandons_the_plugin_nor_kills_the_worker(worker):
    request = Message("echo", id="r1", stage="slow", final=True, data={"parts": 1, "delay_s": 0.6})
    worker.send("data", request)
    time.sleep(0.2)  # the plugin is computing; the garbled frame is read between its two outputs
    worker.socks["control"].send_multipart(GARBLED)
    outputs = worker.outputs("r1")
    assert [(m.type, m.final) for m in outputs] == [("part", False), ("echo", True)]

    worker.socks["control"].send_multipart(GARBLED)  # and again while idle
    time.sleep(0.5)
    assert worker.proc.poll() is None, worker.log.read_text()[-2000:]
    worker.send("data", Message("echo", id="r2", stage="slow", final=True))
    assert [m.type for m in worker.outputs("r2")] == ["echo"]

    lines = worker.log_lines()
    garbled = [line for line in lines if line["event"] == "unreadable control message from the daemon"]
    assert len(garbled) == 2
    assert all("request_id" not in line for line in garbled), garbled  # the request's context is not leaked
    echoing = [line for line in lines if line["event"] == "echoing"]
    assert [line["request_id"] for line in echoing] == ["r1", "r2"]  # the plugin's own lines keep it

    worker.send("control", Message("shutdown"))
    assert worker.proc.wait(10) == 0
