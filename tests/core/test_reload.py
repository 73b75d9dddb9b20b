"""SIGHUP: what a reload opens, closes and reopens, and what it says needs a restart."""

from __future__ import annotations

import asyncio
import os
import signal
import socket

import pytest
import yaml

from tcccd.wire.client import RequestFailed
from tcccd.wire.protocol import AudioFormat
from tests.support.daemon import free_port
from tests.support.rawclient import RawClient, header

pytest.importorskip("wyoming")
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming.info import Describe, Info  # noqa: E402

DICTATION = {"name": "dict", "plugin": "tests.support.stage_plugins:Dictation", "params": {"utterance_s": 0.5}}


def reload_with(daemon, change) -> None:
    config = yaml.safe_load(daemon.config_path.read_text())
    change(config)
    daemon.config_path.write_text(yaml.safe_dump(config))
    os.kill(daemon.proc.pid, signal.SIGHUP)


def describes(port: int) -> bool:
    async def ask() -> bool:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            return Info.is_type((await asyncio.wait_for(client.read_event(), 30)).type)
    return asyncio.run(ask())


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_reload_opens_moves_and_closes_the_wyoming_door(start_daemon):
    first, second = free_port(), free_port()
    daemon = start_daemon([], {})
    assert daemon.wait_healthy()["wyoming"] is None
    reload_with(daemon, lambda c: c.update(wyoming={"enabled": True, "uri": f"tcp://127.0.0.1:{first}"}))
    daemon.wait_for(lambda r: (r["wyoming"] or {}).get("listening"))
    assert describes(first)
    reload_with(daemon, lambda c: c["wyoming"].update(uri=f"tcp://127.0.0.1:{second}"))
    daemon.wait_for(lambda r: (r["wyoming"] or {}).get("uri", "").endswith(str(second)) and r["wyoming"]["listening"])
    assert describes(second) and refused(first)
    reload_with(daemon, lambda c: c["wyoming"].update(enabled=False))
    daemon.wait_for(lambda r: r["wyoming"] is None)
    assert refused(second)


def test_reload_reopens_the_journal_with_the_new_transcripts_section(start_daemon, tmp_path):
    daemon = start_daemon([DICTATION], {"stream": ["dict"]})
    assert daemon.wait_healthy()["transcripts"]["path"].endswith("transcripts.sqlite3")
    reload_with(daemon, lambda c: c.update(transcripts={"file_name": "mission-2.sqlite3"}))
    daemon.wait_for(lambda r: (r["transcripts"] or {}).get("path", "").endswith("mission-2.sqlite3"))
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("stream", "after-reload", audio=AudioFormat().to_dict()), bytes(32000))
        raw.send(header("stream", "after-reload", seq=1, final=True), b"")
        raw.collect(until=lambda: raw.finals("after-reload"))
    with daemon.client() as client:
        entries = client.transcripts_since()
    assert [e.request_id for e in entries] == ["after-reload"]  # the new file holds it, and only it
    assert (tmp_path / "state" / "mission-2.sqlite3").is_file()
    reload_with(daemon, lambda c: c.update(transcripts={"enabled": False}))
    daemon.wait_for(lambda r: r["transcripts"] is None)
    with daemon.client() as client, pytest.raises(RequestFailed) as failure:
        client.call("transcripts.since", {})
    assert failure.value.code == "no_route"


def test_a_changed_daemon_section_is_said_to_need_a_restart(start_daemon):
    daemon = start_daemon([], {})
    daemon.wait_healthy()
    reload_with(daemon, lambda c: c["daemon"].update(drain_timeout_s=3.0))
    report = daemon.wait_for(lambda r: any("restart" in e["message"] for e in r["last_errors"]))
    assert any("daemon.drain_timeout_s changed" in e["message"] for e in report["last_errors"])
