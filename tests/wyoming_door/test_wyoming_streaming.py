"""Transcript streaming through the Wyoming door: tcccd's live utterances as transcript-chunk events."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import soundfile

pytest.importorskip("wyoming")
from wyoming.asr import Transcribe, Transcript, TranscriptChunk  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming.info import Describe, Info  # noqa: E402

from tests.support.daemon import free_port  # noqa: E402

from .test_wyoming_e2e import ASR, EVENT_WAIT_S, REAL_SPEECH, read_until, refs, transcribe, words  # noqa: E402

FIRST, SECOND = "s004", "s009"  # two sentences of words (no digits), said with a pause between them
PAUSE_S = 1.5  # well over the 500 ms pause that ends an utterance
RATE_HZ = 16000
STEP = 1024 * 2  # bytes per audio-chunk: 1024 samples, as wyoming-bench and Home Assistant send


def clip(name: str) -> bytes:
    audio, rate_hz = soundfile.read(REAL_SPEECH / f"{name}.wav", dtype="int16", always_2d=True)
    assert rate_hz == RATE_HZ
    return audio[:, 0].tobytes()


async def send(client: AsyncTcpClient, pcm: bytes) -> None:
    for i in range(0, len(pcm), STEP):
        await client.write_event(AudioChunk(RATE_HZ, 2, 1, pcm[i:i + STEP]).event())


@pytest.fixture
def streaming_door(start_daemon):
    port = free_port()
    daemon = start_daemon([ASR], {"transcribe": ["asr"], "stream": ["asr"]},
                          stream_idle_timeout_s=600.0,  # only a cancel ends an abandoned stream within the test
                          top={"wyoming": {"enabled": True, "uri": f"tcp://127.0.0.1:{port}",
                                           "transcript_streaming": True}})
    daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=240)
    return daemon, port


def test_each_utterance_is_a_transcript_chunk_while_the_audio_still_comes(streaming_door):
    daemon, port = streaming_door
    expected = refs()
    first, second = clip(FIRST), clip(SECOND)
    pause = np.zeros(int(PAUSE_S * RATE_HZ), "<i2").tobytes()

    async def scenario() -> tuple[Info, list, list]:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            info = Info.from_event((await read_until(client, "info"))[-1])
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Transcribe(language="en").event())
            await client.write_event(AudioStart(RATE_HZ, 2, 1).event())
            await send(client, first + pause)
            # the first sentence is heard before the client has sent the second or audio-stop
            before_stop = await read_until(client, "transcript-chunk", "transcript", "error")
            await send(client, second + pause[:RATE_HZ // 4])
            await client.write_event(AudioStop().event())
            after_stop = await read_until(client, "transcript-stop", "error")
        return info, before_stop, after_stop

    info, before_stop, after_stop = asyncio.run(scenario())
    assert info.asr[0].supports_transcript_streaming
    events = before_stop + after_stop
    types = [e.type for e in events]
    assert types[:2] == ["transcript-start", "transcript-chunk"], types  # every event the door sent, in order
    assert types[-2:] == ["transcript", "transcript-stop"] and set(types[2:-2]) == {"transcript-chunk"}, types
    chunks = [TranscriptChunk.from_event(e).text for e in events if TranscriptChunk.is_type(e.type)]
    assert len(chunks) == 2, chunks  # one per utterance
    final = Transcript.from_event(events[-2]).text
    assert "".join(chunks) == final  # Wyoming appends chunks: they add up to the transcript
    for name, said in ((FIRST, chunks[0]), (SECOND, chunks[1])):
        ref = set(words(expected[name]))
        assert len(ref & set(words(said))) >= 0.6 * len(ref), (name, said, expected[name])

    # a client that does not stream reads past the chunks to the same kind of transcript
    plain = asyncio.run(transcribe(port, first, RATE_HZ))
    assert plain[-1].type == "transcript" and "number" in Transcript.from_event(plain[-1]).text.lower()

    report = daemon.wait_for(lambda r: r["wyoming"]["connections_open"] == 0, timeout_s=EVENT_WAIT_S)
    assert report["wyoming"]["transcript_streaming"] and report["wyoming"]["requests"]["transcribe"] == 2
    journal = sqlite3.connect(Path(daemon.config_path).parent / "state" / "transcripts.sqlite3")
    sources = [row[0] for row in journal.execute("SELECT source FROM transcripts")]
    assert sources.count("wyoming") >= 3  # each utterance journalled as it ends, with the door as its source


def test_a_client_that_leaves_mid_stream_has_its_stream_cancelled(streaming_door):
    daemon, port = streaming_door

    async def leave() -> None:
        client = AsyncTcpClient("127.0.0.1", port)
        await client.connect()
        await client.write_event(AudioStart(RATE_HZ, 2, 1).event())
        await send(client, clip(FIRST))  # no audio-stop: the stream stays open on the daemon
        await client.disconnect()

    asyncio.run(leave())
    report = daemon.wait_for(lambda r: r["wyoming"]["connections_open"] == 0 and r["requests_in_flight"] == 0,
                             timeout_s=EVENT_WAIT_S)
    assert report["wyoming"]["cancelled_on_disconnect"] == 1
    assert asyncio.run(transcribe(port, clip(SECOND), RATE_HZ))[-1].type == "transcript"  # still serving
