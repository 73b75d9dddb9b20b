"""A Wyoming transcription (audio-start, audio-chunk..., audio-stop): one tcccd `transcribe`, or a live `stream`.

Buffered (the default): the audio is kept until audio-stop and sent as one
`transcribe`, which packs the whole recording's speech before Whisper sees it,
and answered with one `transcript`.

Streamed (`wyoming.transcript_streaming`, advertised only when the `stream`
route ends in tcccd's Whisper): the audio goes to the daemon as it arrives, as
a tcccd `stream`, so Whisper decodes each utterance once the speaker pauses,
while later audio is still coming. Every finished utterance becomes a
`transcript-chunk`; Wyoming's chunks are appended to one another, so tcccd's
revisable partials (a guess that the next partial may change) are not sent.
audio-stop closes the stream; then `transcript` (the whole text, which the
chunks add up to) and `transcript-stop`. Wyoming has no way for a client to
ask for streaming per request: a server that streams does so for everyone, and
clients that do not stream read past the chunks to `transcript`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from wyoming.asr import Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioStart

from tcccd.wire.errors import ErrorReply
from tcccd.wire.protocol import AudioFormat, Message
from tcccd.wire.replies import Transcript as TcccdTranscript
from tcccd.wyoming_door.link import to_tcccd_pcm

if TYPE_CHECKING:
    from tcccd.wyoming_door.handler import WyomingHandler

SAMPLE_WIDTHS = (1, 2, 3, 4)
MESSAGE_BYTES = 256 * 1024  # queued chunks are sent together up to this size when the daemon falls behind


def _transcript_of(reply: Message) -> TcccdTranscript:
    """The transcript a reply carries; an empty one for a reply of another type (a route not ending in ASR)."""
    return TcccdTranscript.from_message(reply) if reply.type == TcccdTranscript.TYPE else TcccdTranscript()


class TooMuchAudio(Exception):
    """More audio than wyoming.max_audio_bytes waits in the door (buffered, or queued for a slow daemon)."""


def checked_start(start: AudioStart) -> AudioStart:
    if start.width not in SAMPLE_WIDTHS or not 1 <= start.channels <= 32 or not 1000 <= start.rate <= 384000:
        raise ValueError(f"audio-start rate={start.rate} width={start.width} channels={start.channels}: "
                         f"accepted are width 1-4 bytes, 1-32 channels, 1000-384000 Hz")
    return start


class Transcription:
    """One audio stream's PCM, cut at whole frames and converted to pcm_s16le as it arrives."""

    runs_at_start = False  # its run() is chained at audio-start (streamed) or at audio-stop (buffered)

    def __init__(self, start: AudioStart, max_bytes: int) -> None:
        self.start = checked_start(start)
        self.max_bytes = max_bytes
        self.format = AudioFormat("pcm_s16le", start.rate, start.channels)
        self._frame_bytes = start.width * start.channels
        self._partial_frame = b""

    def _whole_frames(self, pcm: bytes) -> bytes:
        joined = self._partial_frame + pcm
        cut = len(joined) - len(joined) % self._frame_bytes
        self._partial_frame = joined[cut:]
        return to_tcccd_pcm(joined[:cut], self.start.width)[0]


class BufferedTranscription(Transcription):
    def __init__(self, start: AudioStart, max_bytes: int) -> None:
        super().__init__(start, max_bytes)
        self._pcm = bytearray()

    def add(self, pcm: bytes) -> None:
        if len(self._pcm) + len(pcm) > self.max_bytes:
            raise TooMuchAudio(f"more than {self.max_bytes} bytes of audio in one transcription "
                               f"(wyoming.max_audio_bytes); send shorter recordings")
        self._pcm += self._whole_frames(pcm)

    def finish(self) -> None:
        """Nothing to do until the work chain reaches run()."""

    async def run(self, handler: WyomingHandler) -> None:
        message = Message("transcribe", id=handler.new_id(), payload=bytes(self._pcm), audio=self.format)
        async with handler.open_request("transcribe", message.id):
            reply = await handler.link.call(message)
        text = _transcript_of(reply).text.strip()
        await handler.write_event(Transcript(text=text, language="en").event())


class StreamedTranscription(Transcription):
    runs_at_start = True
    def __init__(self, start: AudioStart, max_bytes: int) -> None:
        super().__init__(start, max_bytes)
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._queued_bytes = 0
        self._started = False  # transcript-start sent
        self._ended = False  # the request is over (answered or refused): later audio is not kept

    def add(self, pcm: bytes) -> None:
        if self._ended:
            return
        if self._queued_bytes + len(pcm) > self.max_bytes:
            raise TooMuchAudio(f"more than {self.max_bytes} bytes of audio waiting for tcccd "
                               f"(wyoming.max_audio_bytes): the daemon is not keeping up with this stream")
        converted = self._whole_frames(pcm)
        self._queued_bytes += len(converted)
        self._queue.put_nowait(converted)

    def finish(self) -> None:
        self._queue.put_nowait(None)

    async def run(self, handler: WyomingHandler) -> None:
        request_id = handler.new_id()
        handler.link.stream_opened(request_id)
        async with handler.open_request("transcribe", request_id):
            sender = asyncio.create_task(self._send(handler, request_id))
            try:
                text = await self._relay(handler, request_id)
            finally:
                self._ended = True
                sender.cancel()
        await self._begin(handler)
        await handler.write_event(Transcript(text=text, language="en").event())
        await handler.write_event(TranscriptStop().event())

    async def _send(self, handler: WyomingHandler, request_id: str) -> None:
        """Chunks as they come; what queued while the daemon was busy goes in one message."""
        seq = 0
        while True:
            pieces = [await self._queue.get()]
            while pieces[-1] is not None and not self._queue.empty() and sum(map(len, pieces)) < MESSAGE_BYTES:
                pieces.append(self._queue.get_nowait())
            pcm = b"".join(p for p in pieces if p)
            self._queued_bytes -= len(pcm)
            if pcm:
                await handler.link.send(Message("stream", id=request_id, seq=seq, payload=pcm, audio=self.format))
                seq += 1
            if pieces[-1] is None:
                handler.link.stream_closed(request_id)
                await handler.link.send(Message("stream", id=request_id, seq=seq, payload=b"", audio=self.format,
                                                final=True))
                return

    async def _relay(self, handler: WyomingHandler, request_id: str) -> str:
        """Each finished utterance as a transcript-chunk; returns the stream's whole text."""
        said, whole = False, ""
        async for reply in handler.link.replies(request_id):
            if reply.type == "error":  # a notice: the stream goes on (e.g. a chunk dropped as busy)
                notice = ErrorReply.from_message(reply)
                handler.log.warning("wyoming stream notice", code=notice.code, message=notice.message)
                continue
            heard = _transcript_of(reply)
            text = heard.text.strip()
            if reply.final:
                whole = text
            elif not heard.partial and text:
                await self._begin(handler)
                await handler.write_event(TranscriptChunk(text=f" {text}" if said else text).event())
                said = True
        return whole

    async def _begin(self, handler: WyomingHandler) -> None:
        if not self._started:
            self._started = True
            await handler.write_event(TranscriptStart(language="en").event())
