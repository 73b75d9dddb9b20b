"""The Wyoming front door: the `wyoming` package's server on an asyncio loop in a thread of the daemon.

Home Assistant, wyoming-satellite and Rhasspy speak Wyoming, not tcccd's
ZeroMQ protocol. The door listens where `wyoming.uri` says and serves each
connection as an ordinary tcccd client (tcccd.wyoming_door.handler), so it never
touches the broker's internals: the main loop stays single-threaded and every
Wyoming request gets the same caps, deadlines, cancellation, journal and logs
as a ZeroMQ one. The door itself only keeps counters for status.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from collections.abc import Callable
from typing import Any

import structlog
import zmq.asyncio

from tcccd.config import Config, DaemonSection
from tcccd.wyoming_door.settings import WyomingSettings

START_TIMEOUT_S = 10.0
WYOMING_CLIENT_PREFIX = b"wyoming:"  # the routing id of each connection's DEALER (tcccd.wyoming_door.handler)
UNAUTHENTICATED = "unauthenticated: Wyoming has no authentication; anyone who can reach this address can use it"


class WyomingDoorError(RuntimeError):
    """The door could not open (address in use, a CurveZMQ daemon it cannot join)."""


class WyomingDoor:
    def __init__(self, settings: WyomingSettings, daemon: DaemonSection, stream_route: Callable[[], bool]) -> None:
        from tcccd.wyoming_door.link import DoorCounters

        self.settings = settings
        self.stream_route = stream_route  # whether routes.stream reaches the whisper stage, in the config in force
        self.curve = daemon.curve_secret_key_file is not None
        self.endpoint = daemon.client_endpoint
        self.reply_wait_s = daemon.default_deadline_s + 5.0
        self.counters = DoorCounters()
        self.log = structlog.get_logger()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._failure: str | None = None

    def start(self) -> None:
        """Listen, or raise WyomingDoorError with the reason; returns once the socket is bound."""
        if self.curve:
            self._failure = ("wyoming.enabled with CurveZMQ keys is not supported yet (the door would need an "
                             "authorised client key); disable wyoming or the daemon's curve keys")
            raise WyomingDoorError(self._failure)
        self._thread = threading.Thread(target=self._serve, name="wyoming-door", daemon=True)
        self._thread.start()
        if not self._started.wait(START_TIMEOUT_S) or self._failure:
            raise WyomingDoorError(f"the Wyoming door could not listen on {self.settings.uri}: "
                                   f"{self._failure or 'no answer within 10 s'}")
        if self.settings.unauthenticated_remote:
            self.log.warning("wyoming door listening on a non-loopback address", uri=self.settings.uri,
                             security=UNAUTHENTICATED)
        else:
            self.log.info("wyoming door listening", uri=self.settings.uri)

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        finally:
            loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        ctx = zmq.asyncio.Context()
        try:
            from wyoming.server import AsyncServer

            from tcccd.wyoming_door.handler import WyomingHandler

            factory = functools.partial(_make_handler, WyomingHandler, settings=self.settings, ctx=ctx,
                                        endpoint=self.endpoint, reply_wait_s=self.reply_wait_s,
                                        counters=self.counters, streams_transcripts=self.streams_transcripts)
            server = AsyncServer.from_uri(self.settings.uri)
            await server.start(factory)
        except ImportError as exc:
            self._failure = f"{exc}: install the 'wyoming' extra (pip install 'tcccd[wyoming]')"
        except (OSError, ValueError) as exc:
            self._failure = str(exc)
        if self._failure:
            self._started.set()
            ctx.destroy(0)
            return
        self._started.set()
        await self._stop.wait()
        await server.stop()
        ctx.destroy(0)

    def stop(self) -> None:
        if self._loop is None or self._stop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5.0)

    def streams_transcripts(self) -> bool:
        """Transcripts are streamed (tcccd.wyoming_door.asr) when asked for and a real stream path exists."""
        return self.settings.transcript_streaming and self.stream_route()

    def report(self) -> dict[str, Any]:
        """The `wyoming` section of status."""
        snapshot = dataclasses.asdict(self.counters)
        return {"uri": self.settings.uri, "listening": self._started.is_set() and not self._failure,
                "failure": self._failure, "transcript_streaming": self.streams_transcripts(),
                "security": UNAUTHENTICATED if self.settings.unauthenticated_remote else "loopback only",
                **snapshot}


def attach(broker: Any, feed: Any, settings: WyomingSettings, daemon: DaemonSection) -> WyomingDoor | None:
    """The door when `wyoming.enabled`; its clients' final transcripts are journalled with source `wyoming`."""
    if not settings.enabled:
        return None
    journal_as_client = broker.publish_transcript

    def publish_transcript(request: Any, message: Any) -> Any:
        if request.client.startswith(WYOMING_CLIENT_PREFIX):
            return feed.final(message, "wyoming")
        return journal_as_client(request, message)

    broker.publish_transcript = publish_transcript
    return WyomingDoor(settings, daemon, lambda: streams_through_whisper(broker.config))


def streams_through_whisper(config: Config) -> bool:
    """Whether a tcccd `stream` reaches the whisper stage, whose utterances the door sends as transcript chunks."""
    plugins = {stage.name: stage.plugin for stage in config.pipeline if stage.enabled}
    return any(plugins.get(name) == "whisper" for name in config.routes.get("stream", []))


def _make_handler(cls: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, **kwargs: Any) -> Any:
    return cls(reader, writer, **kwargs)
