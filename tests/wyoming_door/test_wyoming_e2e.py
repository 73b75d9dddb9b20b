"""The Wyoming door as Home Assistant or a satellite sees it: the wyoming package's own client, a running daemon."""

from __future__ import annotations

import asyncio
import io
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile
import yaml

pytest.importorskip("wyoming")
from wyoming.asr import Transcribe, Transcript  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming.error import Error  # noqa: E402
from wyoming.event import Event, async_read_event  # noqa: E402
from wyoming.info import Describe, Info, SelectProgram  # noqa: E402
from wyoming.ping import Ping, Pong  # noqa: E402
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped  # noqa: E402

from tests.support.daemon import REPO, free_port, make_config  # noqa: E402

REAL_SPEECH = REPO / "tests" / "data" / "real-speech"
CLIPS = ("s003", "s004", "s009", "s012")  # words only: "two" vs "2" is not what is tested here
ASR = {"name": "asr", "plugin": "whisper", "params": {"beam_size": 5}}
TTS = {"name": "piper", "plugin": "piper"}
ROUTES = {"transcribe": ["asr"], "speak": ["piper"]}
EVENT_WAIT_S = 120.0


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]", " ", text.lower()).split()


def refs() -> dict[str, str]:
    rows = (line.split("\t", 1) for line in (REAL_SPEECH / "refs.tsv").read_text().splitlines() if "\t" in line)
    return {name: text for name, text in rows}


async def read_until(client: AsyncTcpClient, *types: str) -> list:
    events = []
    while True:
        event = await asyncio.wait_for(client.read_event(), EVENT_WAIT_S)
        assert event is not None, f"connection closed; events so far: {[e.type for e in events]}"
        events.append(event)
        if event.type in types:
            return events


async def transcribe(port: int, pcm: bytes, rate_hz: int, width: int = 2, channels: int = 1) -> list:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate_hz, width, channels).event())
        step = rate_hz * width * channels // 10
        for i in range(0, len(pcm), step):
            await client.write_event(AudioChunk(rate_hz, width, channels, pcm[i:i + step]).event())
        await client.write_event(AudioStop().event())
        return await read_until(client, "transcript", "error")


async def synthesize(port: int, text: str) -> tuple[bytes, int, list]:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Synthesize(text=text).event())
        events = await read_until(client, "audio-stop", "error")
    return collect_audio(events)


def collect_audio(events: list) -> tuple[bytes, int, list]:
    starts = [AudioStart.from_event(e) for e in events if AudioStart.is_type(e.type)]
    pcm = b"".join(AudioChunk.from_event(e).audio for e in events if AudioChunk.is_type(e.type))
    return pcm, starts[0].rate if starts else 0, events


def wav_of(pcm: bytes, rate_hz: int) -> bytes:
    buf = io.BytesIO()
    soundfile.write(buf, np.frombuffer(pcm, "<i2"), rate_hz, format="WAV", subtype="PCM_16")
    return buf.getvalue()


@pytest.fixture
def daemon_with_wyoming(start_daemon):
    port = free_port()
    daemon = start_daemon([ASR, TTS], ROUTES, top={"wyoming": {"enabled": True, "uri": f"tcp://127.0.0.1:{port}"}})
    daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=240)
    return daemon, port


def test_describe_transcribe_and_synthesize_through_the_wyoming_door(daemon_with_wyoming):
    daemon, port = daemon_with_wyoming
    expected = refs()

    async def scenario() -> None:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            info = Info.from_event((await read_until(client, "info"))[-1])
        assert info.asr and info.asr[0].models[0].languages == ["en"]
        assert info.asr[0].models[0].name  # the model the whisper stage reports loaded
        assert not info.asr[0].supports_transcript_streaming
        assert info.tts and info.tts[0].supports_synthesize_streaming and info.tts[0].voices[0].name

        for name in CLIPS:  # real recordings at their own rate, as 16-bit PCM
            audio, rate_hz = soundfile.read(REAL_SPEECH / f"{name}.wav", dtype="int16", always_2d=True)
            events = await transcribe(port, audio[:, 0].tobytes(), rate_hz)
            text = Transcript.from_event(events[-1]).text
            assert events[-1].type == "transcript", events[-1]
            ref = set(words(expected[name]))
            assert len(ref & set(words(text))) >= 0.6 * len(ref), (name, text, expected[name])

        # a 32-bit stereo declaration is converted like a ZeroMQ client's audio
        audio, rate_hz = soundfile.read(REAL_SPEECH / "s003.wav", dtype="int32", always_2d=True)
        stereo = np.repeat(audio[:, :1], 2, axis=1).astype("<i4").tobytes()
        events = await transcribe(port, stereo, rate_hz, width=4, channels=2)
        assert "urgent" in Transcript.from_event(events[-1]).text.lower()

        pcm, rate_hz, _ = await synthesize(port, "Check the airway and stop the bleeding.")
        assert rate_hz == 22050 and len(pcm) > rate_hz  # over half a second of 16-bit audio
        with daemon.client(timeout_s=120) as zmq_client:
            back = zmq_client.transcribe(wav_of(pcm, rate_hz)).data["text"].lower()
        assert "airway" in back and "bleeding" in back, back

    asyncio.run(scenario())
    report = daemon.wait_for(lambda r: r["wyoming"]["connections_open"] == 0)
    door = report["wyoming"]
    assert door["listening"] and door["security"] == "loopback only"
    assert door["requests"]["transcribe"] == len(CLIPS) + 1 and door["requests"]["speak"] == 1
    journal = sqlite3.connect(Path(daemon.config_path).parent / "state" / "transcripts.sqlite3")
    sources = [row[0] for row in journal.execute("SELECT source FROM transcripts")]
    assert sources.count("wyoming") == len(CLIPS) + 1


def test_streaming_synthesis_sends_audio_per_sentence_then_stopped(daemon_with_wyoming):
    _, port = daemon_with_wyoming

    async def scenario() -> list:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(SynthesizeStart().event())
            for piece in ("Apply pressure ", "to the wound. Check the ", "airway now. Then breathe."):
                await client.write_event(SynthesizeChunk(text=piece).event())
            await client.write_event(Synthesize(text="ignored in a stream").event())
            await client.write_event(SynthesizeStop().event())
            return await read_until(client, "synthesize-stopped", "error")

    events = asyncio.run(scenario())
    assert SynthesizeStopped.is_type(events[-1].type), events[-1]
    bounds = [e.type for e in events if e.type in ("audio-start", "audio-stop")]
    assert bounds == ["audio-start", "audio-stop"] * 3  # one audio stream per sentence, each whole before the next
    assert all(AudioChunk.from_event(e).audio for e in events if AudioChunk.is_type(e.type))


def test_bad_events_oversize_and_disconnects_leave_the_daemon_serving(daemon_with_wyoming):
    daemon, port = daemon_with_wyoming

    async def scenario() -> None:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Ping(text="are you there").event())
            assert Pong.from_event((await read_until(client, "pong"))[-1]).text == "are you there"
            await client.write_event(Event(type="wake-up-neighbours", data={"x": 1}))  # unknown: dropped (the spec)
            await client.write_event(SelectProgram(name="tcccd-whisper").event())  # known: taken, nothing to answer
            await client.write_event(Describe().event())
            assert [e.type for e in await read_until(client, "info", "error")] == ["info"]
            await client.write_event(SelectProgram(name="faster-whisper").event())
            assert "tcccd-whisper" in Error.from_event((await read_until(client, "error"))[-1]).text
            await client.write_event(AudioStart(16000, 7, 1).event())  # a width that does not exist
            error = Error.from_event((await read_until(client, "error"))[-1])
            assert error.code == "bad_message" and "width" in error.text
            await client.write_event(AudioChunk(16000, 2, 1, b"\0\0").event())  # no audio-start in force
            assert (await read_until(client, "error"))[-1].data["code"] == "bad_message"
            await client.write_event(AudioStart(16000, 2, 1).event())
            await client.write_event(AudioStop().event())  # no audio at all: tcccd's own refusal and code
            assert (await read_until(client, "error"))[-1].data["code"] == "bad_audio"

        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b'{"type": "audio-chunk", "payload_length": 999999999999}\n')  # oversized declaration
        await writer.drain()
        error = Error.from_event(await asyncio.wait_for(async_read_event(reader), 10))
        assert error.code == "too_large" and await asyncio.wait_for(reader.read(), 10) == b""

        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"this is not json\n")
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 10) == b""  # malformed framing: the connection is closed

        client = AsyncTcpClient("127.0.0.1", port)  # leaves while its synthesis runs
        await client.connect()
        await client.write_event(Synthesize(text="Casualty one. " * 80).event())
        # leave only once the daemon has the request (on a loaded machine it may not have reached it in 0.3 s)
        await asyncio.to_thread(daemon.wait_for, lambda r: r["requests_in_flight"] >= 1, 30)
        await client.disconnect()

    asyncio.run(scenario())
    report = daemon.wait_for(lambda r: r["wyoming"]["connections_open"] == 0 and r["requests_in_flight"] == 0,
                             timeout_s=60)
    assert report["wyoming"]["cancelled_on_disconnect"] >= 1 and report["wyoming"]["dropped_events"] == 1
    pcm, rate_hz, _ = asyncio.run(synthesize(port, "Still here."))
    assert len(pcm) > rate_hz // 4


def test_a_wyoming_and_a_zeromq_client_at_the_same_time(daemon_with_wyoming):
    daemon, port = daemon_with_wyoming
    results: dict[str, str] = {}

    def zeromq_side() -> None:
        with daemon.client(timeout_s=120) as client:
            chunks = [m.payload for m in client.speak("Hold the bandage firmly.") if m.payload]
            results["zmq"] = f"{sum(len(c) for c in chunks)}"

    thread = threading.Thread(target=zeromq_side)
    thread.start()
    pcm, _, _ = asyncio.run(synthesize(port, "Elevate the leg."))
    thread.join(120)
    assert len(pcm) > 0 and int(results["zmq"]) > 0


def test_a_non_loopback_uri_is_refused_unless_allowed_then_said_to_be_unauthenticated(start_daemon, tmp_path):
    config = make_config(tmp_path, [], {}, top={"wyoming": {"enabled": True, "uri": "tcp://0.0.0.0:10300"}})
    path = tmp_path / "refused.yaml"
    path.write_text(yaml.safe_dump(config))
    run = subprocess.run([sys.executable, "-m", "tcccd", "config", "check", str(path)],
                         capture_output=True, text=True, timeout=60, cwd=REPO)
    said = run.stdout + run.stderr
    assert run.returncode != 0 and "no authentication" in said and "allow_remote" in said, said

    port = free_port()
    daemon = start_daemon([], {}, top={"wyoming": {"enabled": True, "uri": f"tcp://0.0.0.0:{port}",
                                                   "allow_remote": True}})
    report = daemon.wait_for(lambda r: r["wyoming"]["listening"])
    assert report["wyoming"]["security"].startswith("unauthenticated")
    assert "non-loopback" in daemon.logs() and "unauthenticated" in daemon.logs()


def test_a_cap_refusal_reaches_the_wyoming_client_with_tcccds_code(start_daemon):
    """One daemon behind both doors: a ZeroMQ request holding the only open slot makes a Wyoming one `busy`."""
    from tcccd.wire.protocol import Message
    from tests.support.daemon import SLOW

    port = free_port()
    stage = {"name": "slow", "plugin": SLOW, "params": {"delay_s": 4.0}}
    daemon = start_daemon([stage], {"speak": ["slow"], "transcribe": ["slow"]}, max_open_requests=1,
                          top={"wyoming": {"enabled": True, "uri": f"tcp://127.0.0.1:{port}"}})
    daemon.wait_healthy()
    pcm = np.zeros(1600, "<i2").tobytes()
    with daemon.client(timeout_s=30) as zmq_client:
        held = Message("speak", data={"text": "hold the slot"}, final=True)
        zmq_client.send(held)
        daemon.wait_for(lambda r: r["requests_in_flight"] == 1)
        refused = asyncio.run(transcribe(port, pcm, 16000))[-1]
        assert Error.is_type(refused.type) and Error.from_event(refused).code == "busy", refused
        assert list(zmq_client.replies(held.id, 30))[-1].final
    heard = Transcript.from_event(asyncio.run(transcribe(port, pcm, 16000))[-1])
    assert heard.text == f"{len(pcm)} bytes heard"


def test_deadlines_and_the_connection_cap_answer_with_wyoming_errors(start_daemon):
    """The daemon's deadline ends a Wyoming request like a ZeroMQ one; connections past max_connections: busy."""
    from tests.support.daemon import SLOW

    port = free_port()
    stage = {"name": "slow", "plugin": SLOW, "params": {"delay_s": 3.0}}
    daemon = start_daemon([stage], {"speak": ["slow"], "transcribe": ["slow"]}, default_deadline_s=1.0,
                          top={"wyoming": {"enabled": True, "uri": f"tcp://127.0.0.1:{port}", "max_connections": 1}})
    daemon.wait_healthy()

    async def scenario() -> None:
        async with AsyncTcpClient("127.0.0.1", port) as held:
            await held.write_event(Synthesize(text="longer than the deadline").event())
            late = Error.from_event((await read_until(held, "error"))[-1])
            assert late.code == "deadline_exceeded", late

            reader, _ = await asyncio.open_connection("127.0.0.1", port)  # a second connection while one is open
            refused = Error.from_event(await asyncio.wait_for(async_read_event(reader), 10))
            assert refused.code == "busy" and "max_connections" in refused.text
            assert await asyncio.wait_for(reader.read(), 10) == b""

    async def describe_once() -> str:
        async with AsyncTcpClient("127.0.0.1", port) as client:
            await client.write_event(Describe().event())
            return (await read_until(client, "info", "error"))[-1].type

    asyncio.run(scenario())
    door = daemon.wait_for(lambda r: r["wyoming"]["connections_open"] == 0)["wyoming"]
    assert door["refused_connections"] == 1
    assert asyncio.run(describe_once()) == "info"  # the slot is free again
