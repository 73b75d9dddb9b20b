"""The TAK network on a thread of its own: pytak's asyncio client, which never blocks the daemon's loop.

The daemon's thread hands it confirmed CASEVAC events (`send`) and reads back
what happened (`drain`: sent, positions heard, gpsd's state) and how the link
stands (`status`). The link connects through pytak (`protocol_factory`: TLS
with the unit's client certificate, TCP, or UDP to the mesh), writes each event
once (`TXWorker.send_data`: written and drained), and reads the feed for the
medic's TAK device (tcccd.tak.feed). On TCP or TLS the first event is pytak's
hello (`t-x-d-d`, no position): a TAK server takes a client's first event as its
announcement (FreeTAKServer relays nothing to or from a client that sends none).
A server that is down or refuses is tried
again after a doubling delay (`retry_initial_s` to `retry_max_s`); events wait in
order meanwhile and leave once the link is back. An event leaves only while the
connection's reading side is open: a server that closed it is reconnected first.
"""

from __future__ import annotations

import asyncio
import collections
import queue
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any

from tcccd.tak import gpsd
from tcccd.tak.cot import Point, restamp
from tcccd.tak.feed import device_point
from tcccd.tak_settings import TakSettings

CONNECT_TIMEOUT_S = 10.0
GPSD_RETRY_S = 5.0
STEADY_S = 30.0  # a connection that lived this long starts the next retry from retry_initial_s


@dataclass(frozen=True)
class Outgoing:
    seq: int
    cot: bytes


@dataclass(frozen=True)
class Sent:
    seq: int
    ts: float
    destination: str


@dataclass(frozen=True)
class Heard:
    point: Point


@dataclass(frozen=True)
class GpsdState:
    problem: str  # '' while gpsd gives a fix


Report = Sent | Heard | GpsdState


def _describe(exc: BaseException) -> str:
    text = str(exc) or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}"[:300]


class TakLink:
    def __init__(self, settings: TakSettings, password: str | None = None) -> None:
        self.settings = settings
        self.password = password
        self.reports: queue.SimpleQueue[Report] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {"connected": False, "since": None, "error": "starting", "retry_at": None}
        self._pending: collections.deque[Outgoing] = collections.deque()  # the loop's thread only
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    # -- from the daemon's thread -------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), name="tak-link", daemon=True)
        self._thread.start()
        self._ready.wait(5.0)

    def send(self, item: Outgoing) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._enqueue, item)

    def drain(self) -> list[Report]:
        out = []
        while not self.reports.empty():
            out.append(self.reports.get_nowait())
        return out

    def status(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._state)

    def stop(self, timeout_s: float = 5.0) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout_s)

    # -- the link's thread --------------------------------------------------------------------------------------

    def _enqueue(self, item: Outgoing) -> None:
        if all(queued.seq != item.seq for queued in self._pending):
            self._pending.append(item)
        assert self._wake is not None
        self._wake.set()

    def _set(self, connected: bool, error: str | None, retry_in_s: float | None = None) -> None:
        with self._lock:
            was = self._state["connected"]
            self._state.update(connected=connected, error=error,
                               since=self._state["since"] if connected and was else time.time(),
                               retry_at=time.time() + retry_in_s if retry_in_s is not None else None)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake, self._stop = asyncio.Event(), asyncio.Event()
        self._ready.set()
        tasks = [asyncio.create_task(self._connections())]
        if self.settings.gpsd.enabled:
            tasks.append(asyncio.create_task(self._gpsd()))
        await self._stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _pytak_config(self) -> Any:
        from configparser import ConfigParser

        s, tls = self.settings, self.settings.tls
        values = {"COT_URL": s.url, "TAK_PROTO": "1" if s.protocol == "protobuf" else "0",
                  "PYTAK_TLS_CLIENT_CERT": tls.client_cert, "PYTAK_TLS_CLIENT_KEY": tls.client_key,
                  "PYTAK_TLS_CLIENT_CAFILE": tls.ca_file, "PYTAK_TLS_CLIENT_PASSWORD": self.password,
                  "PYTAK_TLS_SERVER_EXPECTED_HOSTNAME": tls.server_hostname}
        parser = ConfigParser(interpolation=None)
        parser["tcccd"] = {k: str(v) for k, v in values.items() if v is not None}
        return parser["tcccd"]

    async def _connections(self) -> None:
        with warnings.catch_warnings():  # pytak warns at import about optional packages it does not need here
            warnings.simplefilter("ignore")
            import pytak
        delay = self.settings.retry_initial_s
        while True:
            config = self._pytak_config()
            try:
                reader, writer = await asyncio.wait_for(pytak.protocol_factory(config), CONNECT_TIMEOUT_S)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - refused, unreachable, TLS refused: all retried
                error = _describe(exc)
            else:
                self._set(True, None)
                started = time.monotonic()
                error = await self._session(pytak, config, reader, writer)
                if time.monotonic() - started >= STEADY_S:
                    delay = self.settings.retry_initial_s
            self._set(False, error, delay)
            await asyncio.sleep(delay)
            delay = min(self.settings.retry_max_s, delay * 2)

    async def _session(self, pytak: Any, config: Any, reader: Any, writer: Any) -> str:
        """Send what waits, then wait for more, until the connection ends; why it ended."""
        tx = pytak.TXWorker(asyncio.Queue(), config, writer)
        receiving = asyncio.create_task(self._receive(pytak.RXWorker(asyncio.Queue(), config, reader), reader)) \
            if reader is not None else None
        assert self._wake is not None
        try:
            if self.settings.transport != "udp":  # a TAK server takes a client's first event as its hello
                await tx.send_data(pytak.hello_event(self.settings.kit_uid))
            while True:
                await asyncio.sleep(0)  # let the reading side see a closed connection first
                if receiving is not None and receiving.done():
                    return receiving.result()
                if self._pending:
                    item = self._pending[0]
                    await tx.send_data(restamp(item.cot, time.time(), self.settings.stale_s))
                    self._pending.popleft()
                    self.reports.put(Sent(item.seq, time.time(), self.settings.url))
                    continue
                self._wake.clear()
                waiting = asyncio.create_task(self._wake.wait())
                await asyncio.wait({waiting, *([receiving] if receiving else [])},
                                   return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a write or read that failed ends this connection only
            return _describe(exc)
        finally:
            if receiving is not None:
                receiving.cancel()
            for end in (writer, reader):
                close = getattr(end, "close", None)
                if close is not None:
                    close()

    async def _receive(self, rx: Any, reader: Any) -> str:
        """The feed, read-only: the medic's device's position reports. Returns when the server closed it."""
        s = self.settings
        while True:
            data = await rx.readcot()
            if not data:
                if getattr(reader, "at_eof", lambda: False)():
                    return "the server closed the connection"
                continue
            if isinstance(data, (bytes, bytearray)):
                point = device_point(bytes(data), s.callsign, s.device_uid, time.time())
                if point is not None:
                    self.reports.put(Heard(point))

    async def _gpsd(self) -> None:
        while True:
            try:
                await gpsd.watch(self.settings.gpsd.port, lambda p: self.reports.put(Heard(p)),
                                 lambda problem: self.reports.put(GpsdState(problem)))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a line too long, a reset: read again later
                self.reports.put(GpsdState(f"gpsd read failed: {_describe(exc)}"))
            await asyncio.sleep(GPSD_RETRY_S)
