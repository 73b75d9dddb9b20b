"""The Python client: what a tablet app or casualty-card tool uses to talk to tcccd.

One DEALER socket for requests, one SUB socket for events, as docs/protocol.md
describes; a client in another language does the same with any ZeroMQ library.
"""

from __future__ import annotations

import collections
import socket
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import zmq

from tcccd.wire.curve import CurveKeys
from tcccd.wire.errors import ErrorReply
from tcccd.wire.protocol import AudioFormat, Message, new_id
from tcccd.wire.replies import JournalEntry, ProfileReply, TranscriptsReply
from tcccd.wire.status import StatusReport

REPLY_GRACE_S = 2.0


class DaemonNotRunning(ConnectionError):
    pass


class RequestFailed(RuntimeError):
    """The daemon answered a request with an error reply."""

    def __init__(self, reply: Message) -> None:
        self.reply = reply
        self.error = ErrorReply.from_message(reply)
        self.code = self.error.code
        super().__init__(f"{self.code}: {self.error.message}")


def check_listening(endpoint: str, timeout_s: float = 0.5) -> None:
    """Fail fast, with a useful message, when nothing listens at the endpoint.

    ZeroMQ connects lazily and would just wait; an operator wants to hear at
    once that the daemon is not running.
    """
    scheme, _, address = endpoint.partition("://")
    try:
        if scheme == "tcp":
            host, _, port = address.rpartition(":")
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
        elif scheme == "ipc":
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout_s)
                sock.connect(address)
    except OSError as exc:
        raise DaemonNotRunning(f"tcccd is not running: nothing answers at {endpoint} ({exc.strerror or exc}); "
                               f"start it with `tcccd run` or `systemctl start tcccd`") from None


def wait_until_healthy(endpoint: str, timeout_s: float = 120.0, request_timeout_s: float = 120.0) -> Client:
    """A connected client once the daemon reports healthy; for scripts, benches and tests that start one."""
    deadline = time.monotonic() + timeout_s
    last = "nothing answered"
    while time.monotonic() < deadline:
        try:
            client = Client(endpoint, timeout_s=5)
            last = client.status().state
            if last == "healthy":
                client.timeout_s = request_timeout_s
                return client
            client.close()
        except (ConnectionError, TimeoutError) as exc:
            last = str(exc)
        time.sleep(0.2)
    raise TimeoutError(f"tcccd at {endpoint} not healthy within {timeout_s:g} s (last: {last})")


class Client:
    def __init__(self, endpoint: str = "tcp://127.0.0.1:7781", timeout_s: float = 120.0, check: bool = True,
                 curve: CurveKeys | None = None) -> None:
        """`curve`: keys for a daemon that requires CurveZMQ; by default from TCCCD_CURVE_* when set."""
        if check:
            check_listening(endpoint)
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self.curve = curve or CurveKeys.from_env()
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        if self.curve is not None:
            self.curve.apply(self.sock)
        self.sock.connect(endpoint)
        self._mailbox: dict[str, collections.deque[Message]] = {}

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.ctx.destroy(linger=0)

    def send(self, message: Message) -> None:
        self._mailbox.setdefault(message.id, collections.deque())
        self.sock.send_multipart(message.to_frames())

    def _receive(self, timeout_s: float) -> bool:
        """Move one reply into its request's mailbox; False on silence."""
        if not self.sock.poll(max(0.0, timeout_s) * 1000):
            return False
        reply = Message.from_frames(self.sock.recv_multipart())
        if reply.id in self._mailbox:  # otherwise a late reply to a request this client gave up on
            self._mailbox[reply.id].append(reply)
        return True

    def arrived(self, request_id: str) -> list[Message]:
        """Replies to a request that are already here, without waiting."""
        while self._receive(0):
            pass
        box = self._mailbox.get(request_id, collections.deque())
        out = list(box)
        box.clear()
        return out

    def replies(self, request_id: str, timeout_s: float) -> Iterator[Message]:
        """Replies to one request until its final one; raises on an error reply or silence."""
        deadline = time.monotonic() + timeout_s
        box = self._mailbox.setdefault(request_id, collections.deque())
        try:
            while True:
                while not box:
                    if not self._receive(deadline - time.monotonic()):
                        raise TimeoutError(f"no reply from tcccd at {self.endpoint} within {timeout_s:g} s")
                reply = box.popleft()
                if reply.type == "error" and reply.final:
                    raise RequestFailed(reply)
                yield reply
                if reply.final:
                    return
        finally:
            self._mailbox.pop(request_id, None)

    def request(self, message: Message) -> Iterator[Message]:
        message.final = True
        self.send(message)
        yield from self.replies(message.id, self._wait_s(message))

    def call(self, type: str, data: dict[str, Any] | None = None, **fields: Any) -> Message:
        """A request with a single final reply."""
        *_, final = self.request(Message(type, data=data or {}, **fields))
        return final

    def _wait_s(self, message: Message) -> float:
        return (message.deadline_s or self.timeout_s) + REPLY_GRACE_S

    def transcribe(self, audio: str | Path | bytes, audio_format: AudioFormat | None = None,
                   deadline_s: float | None = None) -> Message:
        """A whole recording (a file path, file bytes, or raw PCM with its format) to one final transcript."""
        payload = Path(audio).read_bytes() if isinstance(audio, (str, Path)) else audio
        return self.call("transcribe", payload=payload, audio=audio_format or AudioFormat("wav"),
                         deadline_s=deadline_s)

    def stream(self, audio_format: AudioFormat, deadline_s: float | None = None) -> AudioStream:
        return AudioStream(self, audio_format, deadline_s)

    def speak(self, text: str, deadline_s: float | None = None, **data: Any) -> Iterator[Message]:
        """PCM chunks ('audio' messages) as they are made; the last has final=True."""
        return self.request(Message("speak", data={"text": text, **data}, deadline_s=deadline_s))

    def speak_tokens(self, chunks: Iterable[list[int] | str] = (), prompt: str | None = None,
                     deadline_s: float | None = None) -> Iterator[Message]:
        """Orpheus tokens (id lists or '<custom_token_N>' text) in, PCM chunks out."""
        if prompt is not None:
            return self.request(Message("speak.tokens", data={"prompt": prompt}, deadline_s=deadline_s))
        request_id = new_id()
        seq = 0
        for seq, chunk in enumerate(chunks):
            data = {"text": chunk} if isinstance(chunk, str) else {"tokens": list(chunk)}
            self.send(Message("speak.tokens", id=request_id, seq=seq, data=data, deadline_s=deadline_s))
        self.send(Message("speak.tokens", id=request_id, seq=seq + 1, final=True, deadline_s=deadline_s))
        return self.replies(request_id, (deadline_s or self.timeout_s) + REPLY_GRACE_S)

    def cancel(self, request_id: str) -> None:
        """End an open request (a stream the user stopped); its one final reply is a `cancelled` error."""
        self.sock.send_multipart(Message("cancel", id=request_id, final=True).to_frames())

    # One method per local request, named for it, each with its typed reply (tcccd.wire.replies, .status).
    def status(self) -> StatusReport:
        """The health report (`.to_data()` for its JSON, as `tcccd status --json` prints it)."""
        return StatusReport.from_message(self.call("status"))

    def profile_get(self) -> ProfileReply:
        return ProfileReply.from_message(self.call("profile.get"))

    def profile_set(self, name: str, reason: str = "set by a client", for_s: float | None = None) -> ProfileReply:
        """Ask for a profile; with `for_s`, an override that bypasses the battery/thermal caps until it expires."""
        data: dict[str, Any] = {"name": name, "reason": reason}
        if for_s is not None:
            data["for_s"] = for_s
        return ProfileReply.from_message(self.call("profile.set", data))

    def transcripts_since(self, since_ts: float = 0.0, after_seq: int = 0, page: int = 1000) -> list[JournalEntry]:
        """Every journalled transcript after a time and/or a `journal_seq`, oldest first, read `page` at a time."""
        entries: list[JournalEntry] = []
        while True:
            reply = self.call("transcripts.since", {"since_ts": since_ts, "after_seq": after_seq, "limit": page})
            entries += TranscriptsReply.entries_of(reply)
            typed = TranscriptsReply.from_message(reply)
            if not typed.more or typed.last_seq is None:
                return entries
            after_seq = typed.last_seq

    def subscribe(self, topics: Iterable[str] = ("transcript", "profile", "alert"),
                  events_endpoint: str | None = None) -> Subscription:
        events = events_endpoint or self.status().endpoints.events
        return Subscription(self.ctx, events, topics, self.curve)


class AudioStream:
    """A live stream: chunks in, partial and final transcripts out, one final reply at the end."""

    def __init__(self, client: Client, audio_format: AudioFormat, deadline_s: float | None) -> None:
        self.client = client
        self.id = new_id()
        self.format = audio_format
        self.deadline_s = deadline_s
        self.seq = 0

    def __enter__(self) -> AudioStream:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def send(self, chunk: bytes) -> list[Message]:
        """Send one chunk; returns the replies that have arrived so far (partials, utterances, busy notes)."""
        self.client.send(Message("stream", id=self.id, seq=self.seq, payload=chunk, audio=self.format,
                                 deadline_s=self.deadline_s))
        self.seq += 1
        arrived = self.client.arrived(self.id)
        for reply in arrived:
            if reply.final and reply.type == "error":
                raise RequestFailed(reply)
        return arrived

    def finish(self) -> list[Message]:
        """End the stream; every reply still to come, the final transcript last."""
        self.client.send(Message("stream", id=self.id, seq=self.seq, payload=b"", audio=self.format, final=True,
                                 deadline_s=self.deadline_s))
        return list(self.client.replies(self.id, (self.deadline_s or self.client.timeout_s) + REPLY_GRACE_S))


class Subscription:
    def __init__(self, ctx: zmq.Context, endpoint: str, topics: Iterable[str], curve: CurveKeys | None = None) -> None:
        self.sock = ctx.socket(zmq.SUB)
        self.sock.setsockopt(zmq.LINGER, 0)
        if curve is not None:
            curve.apply(self.sock)
        for topic in topics:
            self.sock.setsockopt(zmq.SUBSCRIBE, topic.encode())
        self.sock.connect(endpoint)

    def next(self, timeout_s: float) -> tuple[str, Message] | None:
        if not self.sock.poll(timeout_s * 1000):
            return None
        topic, *frames = self.sock.recv_multipart()
        return topic.decode(), Message.from_frames(frames)

    def close(self) -> None:
        self.sock.close(0)
