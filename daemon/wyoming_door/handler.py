"""One Wyoming connection, served as one ordinary tcccd client.

Each Wyoming connection gets its own DEALER to the daemon's client endpoint, so
the broker sees it like any other client: the same caps per client (a refusal
comes back as a Wyoming `error` whose code is tcccd's), deadlines, cancellation,
journal and logs. Events are read and written by the `wyoming` package; this
module only maps them. Work for the daemon runs as one chain of tasks per
connection, so the event reader keeps reading: a client that goes away is
noticed at once and its open request is cancelled on the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import structlog
import zmq.asyncio
from sentence_stream import SentenceBoundaryDetector
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, SelectProgram
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped

from tcccd.wire.model import ReplyInvalid
from tcccd.wire.protocol import Message
from tcccd.wire.status import StatusReport
from tcccd.wyoming_door.asr import BufferedTranscription, StreamedTranscription, TooMuchAudio, Transcription
from tcccd.wyoming_door.info import PROGRAMS, describe
from tcccd.wyoming_door.link import BoundedReader, DaemonRefused, DoorCounters, TcccdLink
from tcccd.wyoming_door.settings import WyomingSettings


class TranscriptStreaming(Protocol):
    """tcccd.wyoming_door.server.WyomingDoor: whether transcripts stream back as the medic speaks."""

    def streams_transcripts(self) -> bool: ...


class WyomingHandler(AsyncEventHandler):
    _ids = itertools.count(1)

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, open_handlers: set[Any],
                 settings: WyomingSettings, ctx: zmq.asyncio.Context, endpoint: str, reply_wait_s: float,
                 counters: DoorCounters, door: TranscriptStreaming) -> None:
        self.bounded = BoundedReader(reader, settings.max_audio_bytes)
        super().__init__(self.bounded, writer)  # type: ignore[arg-type] - the parser needs readline/readexactly
        self.settings = settings
        self.counters = counters
        self.door = door
        self.number = next(self._ids)
        self.link = TcccdLink(ctx, endpoint, str(self.number).encode(), reply_wait_s)
        self.open_handlers = open_handlers
        open_handlers.add(self)
        self.log = structlog.get_logger().bind(wyoming_connection=self.number)
        self._work: asyncio.Task[None] | None = None
        self._audio: Transcription | None = None
        self._sentences: SentenceBoundaryDetector | None = None
        self._requests = itertools.count(1)
        counters.connections_open += 1
        counters.connections_total += 1

    async def run(self) -> None:
        """Serve the connection, unless wyoming.max_connections are open: then `busy`, and it is closed."""
        if self.counters.connections_open > self.settings.max_connections:
            self.counters.refused_connections += 1
            await self._error("busy", f"{self.settings.max_connections} Wyoming connections are open "
                                      f"(wyoming.max_connections); try again when one closes")
            await self.disconnect()
            self.writer.close()
            return
        await super().run()

    # -- events ------------------------------------------------------------------------------------------------

    async def handle_event(self, event: Event) -> bool:
        try:
            await self._dispatch(event)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            self.counters.refused_events += 1
            await self._error("bad_message", f"{event.type}: malformed event ({exc!r}); see the Wyoming spec")
        return True

    async def _dispatch(self, event: Event) -> None:
        if Describe.is_type(event.type):
            self.counters.requests["describe"] += 1
            self._chain(self._describe)
        elif Ping.is_type(event.type):
            await self.write_event(Pong(text=Ping.from_event(event).text).event())
        elif SelectProgram.is_type(event.type):
            name = SelectProgram.from_event(event).name
            if name not in PROGRAMS:
                await self._error("bad_request", f"no program named {name!r} here; tcccd serves "
                                                 f"{' and '.join(PROGRAMS)}")
        elif Transcribe.is_type(event.type):
            Transcribe.from_event(event)  # checks it; tcccd's Whisper is English only
        elif AudioStart.is_type(event.type):
            self._start_audio(AudioStart.from_event(event))
        elif AudioChunk.is_type(event.type):
            await self._add_audio(AudioChunk.from_event(event))
        elif AudioStop.is_type(event.type):
            self._finish_audio()
        elif Synthesize.is_type(event.type):
            if self._sentences is None:  # inside a stream it only repeats the text, for older servers
                self._speak(self._checked_text(Synthesize.from_event(event).text))
        elif SynthesizeStart.is_type(event.type):
            SynthesizeStart.from_event(event)
            self._sentences = SentenceBoundaryDetector()
        elif SynthesizeChunk.is_type(event.type):
            self._stream_text(SynthesizeChunk.from_event(event).text)
        elif SynthesizeStop.is_type(event.type):
            self._stop_text_stream()
        else:  # the spec asks servers to drop what they do not know (newer clients send optional events)
            self.counters.dropped_events += 1
            self.log.info("wyoming event dropped: not served here", event_type=event.type)

    def _start_audio(self, start: AudioStart) -> None:
        if self._audio is not None:  # a new audio-start ends the previous audio stream, as audio-stop would not
            self._audio.finish()
            self._audio = None
        kind = StreamedTranscription if self.door.streams_transcripts() else BufferedTranscription
        audio = self._audio = kind(start, self.settings.max_audio_bytes)
        if audio.runs_at_start:
            self._chain(lambda: audio.run(self))

    async def _add_audio(self, chunk: AudioChunk) -> None:
        if self._audio is None:
            raise ValueError("audio-chunk before audio-start")
        try:
            self._audio.add(chunk.audio)
        except TooMuchAudio as exc:
            self._audio.finish()
            self._audio = None
            await self._error("too_large", str(exc))

    def _finish_audio(self) -> None:
        if self._audio is None:
            raise ValueError("audio-stop without audio-start")
        audio, self._audio = self._audio, None
        audio.finish()
        if not audio.runs_at_start:
            self._chain(lambda: audio.run(self))

    def _checked_text(self, text: str) -> str:
        if len(text) > self.settings.max_text_chars:
            raise ValueError(f"text of {len(text)} characters; at most {self.settings.max_text_chars} "
                             f"(wyoming.max_text_chars)")
        return text

    def _stream_text(self, text: str) -> None:
        if self._sentences is None:
            raise ValueError("synthesize-chunk before synthesize-start")
        for sentence in self._sentences.add_chunk(self._checked_text(text)):
            self._speak(sentence)

    def _stop_text_stream(self) -> None:
        if self._sentences is None:
            raise ValueError("synthesize-stop before synthesize-start")
        rest, self._sentences = self._sentences.finish(), None
        if rest.strip():
            self._speak(rest)
        self._chain(lambda: self.write_event(SynthesizeStopped().event()))

    def _speak(self, text: str) -> None:
        self._chain(lambda: self._synthesize(text))

    # -- work for the daemon, one request after another ----------------------------------------------------------

    def _chain(self, make: Callable[[], Awaitable[Any]]) -> None:
        previous = self._work

        async def after() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            await self._guarded(make)

        self._work = asyncio.create_task(after())

    async def _guarded(self, make: Callable[[], Awaitable[Any]]) -> None:
        try:
            await make()
        except DaemonRefused as exc:
            await self._error(exc.code, str(exc))
        except ReplyInvalid as exc:  # a stage's reply that breaks the protocol: a fault of the stage, logged
            self.log.error("reply from tcccd breaks the protocol", error=str(exc))
            await self._error("plugin_error", str(exc))
        except asyncio.TimeoutError:
            await self._error("deadline_exceeded", "tcccd did not answer in time")
        except (ConnectionError, RuntimeError) as exc:
            self.log.info("wyoming client gone before its reply", error=str(exc))

    async def _describe(self) -> None:
        report = StatusReport.from_message(await self.link.call(Message("status", id=self.new_id())))
        await self.write_event(describe(report, transcript_streaming=self.door.streams_transcripts()).event())

    async def _synthesize(self, text: str) -> None:
        message = Message("speak", id=self.new_id(), data={"text": text}, final=True)
        started = False
        async with self.open_request("speak", message.id):
            await self.link.send(message)
            async for reply in self.link.replies(message.id):
                if not reply.payload or reply.audio is None:
                    continue
                if not started:
                    await self.write_event(AudioStart(reply.audio.sample_rate_hz, 2, reply.audio.channels).event())
                    started = True
                await self.write_event(AudioChunk(reply.audio.sample_rate_hz, 2, reply.audio.channels,
                                                  reply.payload).event())
        if started:
            await self.write_event(AudioStop().event())

    def open_request(self, kind: str, request_id: str) -> _OpenRequest:
        return _OpenRequest(self, kind, request_id)

    def new_id(self) -> str:
        return f"wyoming-{self.number}-{next(self._requests)}"

    async def _error(self, code: str, text: str) -> None:
        self.counters.errors += 1
        self.log.info("wyoming error sent", code=code, message=text)
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.write_event(Error(text=text, code=code).event())

    # -- the end of a connection -------------------------------------------------------------------------------

    async def disconnect(self) -> None:
        """The client is gone or broke the framing: cancel what is open on the daemon, then close the link."""
        if self.bounded.refused:
            await self._error("too_large", self.bounded.refused)
        if self._work is not None and not self._work.done():
            self._work.cancel()
            await asyncio.gather(self._work, return_exceptions=True)
        self.link.close()
        self.counters.connections_open -= 1
        self.open_handlers.discard(self)


class _OpenRequest:
    """Counts an open request; if its task is cancelled (the client left), cancels it on the daemon."""

    def __init__(self, handler: WyomingHandler, kind: str, request_id: str) -> None:
        self.handler, self.kind, self.id = handler, kind, request_id

    async def __aenter__(self) -> None:
        self.handler.counters.requests[self.kind] += 1
        self.handler.counters.requests_open += 1

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> None:
        self.handler.counters.requests_open -= 1
        if isinstance(exc, asyncio.CancelledError):
            self.handler.counters.cancelled_on_disconnect += 1
            self.handler.log.info("wyoming client left mid-request: cancelled on the daemon", request_id=self.id)
            await self.handler.link.sock.send_multipart(Message("cancel", id=self.id, final=True).to_frames())
