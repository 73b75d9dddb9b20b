"""Who a client is: the door it came in by decides, never a name it picks; a stranger's message is answered."""

from __future__ import annotations

import asyncio

import pytest

from tcccd.wire.protocol import AudioFormat
from tests.support.daemon import free_port
from tests.support.rawclient import RawClient, header

pytest.importorskip("wyoming")
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming.info import Describe, Info  # noqa: E402

DICTATION = {"name": "dict", "plugin": "tests.support.stage_plugins:Dictation", "params": {"utterance_s": 0.5}}
PCM = AudioFormat("pcm_s16le", 16000, 1)
ONE_SECOND = bytes(32000)


def _stream(raw: RawClient, request_id: str) -> None:
    raw.send(header("stream", request_id, audio=PCM.to_dict()), ONE_SECOND)
    raw.send(header("stream", request_id, seq=1, final=True), b"")
    raw.collect(until=lambda: raw.finals(request_id))


def test_a_zeromq_client_cannot_pass_for_a_wyoming_connection(start_daemon):
    port = free_port()
    daemon = start_daemon([DICTATION], {"stream": ["dict"]},
                          top={"wyoming": {"enabled": True, "uri": f"tcp://127.0.0.1:{port}"}})
    daemon.wait_for(lambda r: r["state"] == "healthy" and r["wyoming"]["listening"])

    async def scenario() -> None:
        async with AsyncTcpClient("127.0.0.1", port) as wyoming:  # the door's first connection: wyoming:1 inside
            await wyoming.write_event(Describe().event())
            assert Info.is_type((await asyncio.wait_for(wyoming.read_event(), 30)).type)
            with RawClient(daemon.endpoint, routing_id=b"wyoming:1") as impostor:
                _stream(impostor, "impostor")
                assert impostor.final("impostor")["type"] == "transcript"
            await wyoming.write_event(Describe().event())  # the real connection is still served, its replies its own
            assert Info.is_type((await asyncio.wait_for(wyoming.read_event(), 30)).type)

    asyncio.run(scenario())
    with daemon.client() as client:
        entries = client.transcripts_since()
    impostor_entries = [e for e in entries if e.request_id == "impostor"]
    assert impostor_entries and {e.source for e in impostor_entries} == {"client"}


def test_a_bad_message_under_another_clients_open_id_is_answered_and_the_owner_goes_on(start_daemon):
    daemon = start_daemon([DICTATION], {"stream": ["dict"]})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as owner, RawClient(daemon.endpoint) as stranger:
        owner.send(header("stream", "shared", audio=PCM.to_dict()), ONE_SECOND)
        owner.collect(quiet_s=0.5)
        stranger.send(header("stream", "shared", seq=1, data={"bogus": 1}), ONE_SECOND)
        stranger.collect(until=lambda: stranger.replies["shared"])
        [notice] = stranger.replies["shared"]
        assert notice["type"] == "error" and not notice.get("final")
        assert notice["data"]["code"] == "bad_request" and "belongs to another client" in notice["data"]["message"]
        owner.send(header("stream", "shared", seq=1, final=True), b"")
        owner.collect(until=lambda: owner.finals("shared"))
        assert owner.final("shared")["data"]["heard_s"] == 1.0  # the stranger's chunk never joined the stream
