"""The Wyoming front door: the `wyoming` package's server on an asyncio loop in a thread of the daemon.

Home Assistant, wyoming-satellite and Rhasspy speak Wyoming, not tcccd's
ZeroMQ protocol. The door listens where `wyoming.uri` says and serves each
connection as an ordinary tcccd client (tcccd.wyoming_door.handler), so it never
touches the broker's internals: the main loop stays single-threaded and every
Wyoming request gets the same caps, deadlines, cancellation, journal and logs
as a ZeroMQ one. Each connection's DEALER reaches the daemon over an in-process
socket of the daemon's own ZeroMQ context (`DOOR_ENDPOINT`), which no process
outside can connect to: a ZeroMQ client cannot pass for a Wyoming connection,
and the door works the same when the client endpoint requires CurveZMQ. The
door itself only keeps counters for status.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from typing import Any, Protocol

import structlog
import zmq
import zmq.asyncio

from tcccd.wyoming_door.settings import DOOR_ENDPOINT, WyomingSettings

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
UNAUTHENTICATED = "unauthenticated: Wyoming has no authentication; anyone who can reach this address can use it"


class WyomingDoorError(RuntimeError):
    """The door could not open (address in use, a CurveZMQ daemon it cannot join)."""


class StreamRoute(Protocol):
    """Whether routes.stream reaches the whisper stage in the config in force (tcccd.core.reload.DoorSlot)."""

    def streams_through_whisper(self) -> bool: ...


class WyomingDoor:
    """`ctx` is the daemon's ZeroMQ context, whose in-process socket at DOOR_ENDPOINT the broker binds."""

    def __init__(self, settings: WyomingSettings, ctx: zmq.Context, reply_wait_s: float,
                 stream_route: StreamRoute) -> None:
        from tcccd.wyoming_door.link import DoorCounters

        self.settings = settings
        self.stream_route = stream_route  # whether routes.stream reaches the whisper stage, in the config in force
        self.ctx = ctx
        self.reply_wait_s = reply_wait_s
        self.counters = DoorCounters()
        self.handlers: set[Any] = set()  # open connections, closed with the door
        self.log = structlog.get_logger()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._failure: str | None = None

    def start(self) -> None:
        """Listen, or raise WyomingDoorError with the reason; returns once the socket is bound."""
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
        ctx = zmq.asyncio.Context(self.ctx)  # a shadow: the daemon's context, so inproc reaches the broker
        try:
            from wyoming.server import AsyncServer

            from tcccd.wyoming_door.handler import WyomingHandler

            factory = functools.partial(WyomingHandler, open_handlers=self.handlers, settings=self.settings, ctx=ctx,
                                        endpoint=DOOR_ENDPOINT, reply_wait_s=self.reply_wait_s,
                                        counters=self.counters, door=self)
            server = AsyncServer.from_uri(self.settings.uri)
            await server.start(factory)
        except ImportError as exc:
            self._failure = f"{exc}: install the 'wyoming' extra (pip install 'tcccd[wyoming]')"
        except (OSError, ValueError) as exc:
            self._failure = str(exc)
        self._started.set()
        if self._failure:
            return
        await self._stop.wait()
        await server.stop()  # each connection's handler ends, cancels its open request and closes its DEALER
        deadline = asyncio.get_running_loop().time() + STOP_TIMEOUT_S
        while self.handlers and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)
        for handler in list(self.handlers):  # the daemon's context ends only once every socket is closed
            handler.link.close()

    def stop(self) -> bool:
        """Close the listener and every connection; False when the door's thread did not end in time."""
        if self._loop is None or self._stop is None or self._thread is None or not self._thread.is_alive():
            return True
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(STOP_TIMEOUT_S + 1.0)
        if self._thread.is_alive():
            self.log.error("wyoming door did not close in time", timeout_s=STOP_TIMEOUT_S)
            return False
        return True

    def streams_transcripts(self) -> bool:
        """Transcripts are streamed (tcccd.wyoming_door.asr) when asked for and a real stream path exists."""
        return self.settings.transcript_streaming and self.stream_route.streams_through_whisper()

    def report(self) -> dict[str, Any]:
        """The `wyoming` section of status."""
        snapshot = dataclasses.asdict(self.counters)
        return {"uri": self.settings.uri, "listening": self._started.is_set() and not self._failure,
                "failure": self._failure, "transcript_streaming": self.streams_transcripts(),
                "security": UNAUTHENTICATED if self.settings.unauthenticated_remote else "loopback only",
                **snapshot}

