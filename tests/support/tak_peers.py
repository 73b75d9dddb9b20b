"""The TAK side of a test, with pytak (the library a TAK integrator uses): a receiver on UDP, a TCP listener that
can go down and come back, and a client of a TAK server. Each runs its own asyncio loop on a thread and keeps every
CoT event it read, as bytes, in order. Loopback only.
"""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Callable
from configparser import ConfigParser
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import pytak


def section(url: str) -> Any:
    parser = ConfigParser(interpolation=None)
    parser["peer"] = {"COT_URL": url}
    return parser["peer"]


def position_report(uid: str, callsign: str, lat: float = 1.0, lon: float = 2.0) -> bytes:
    """An ATAK-like SA event (a friendly ground unit's position)."""
    now, stale = pytak.cot_time(), pytak.cot_time(3600)
    return (f'<event version="2.0" uid="{uid}" type="a-f-G-U-C" how="m-g" time="{now}" start="{now}" '
            f'stale="{stale}"><point lat="{lat}" lon="{lon}" hae="10" ce="5" le="9"/><detail>'
            f'<contact callsign="{callsign}" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/>'
            f'</detail></event>').encode()


class Peer:
    def __init__(self) -> None:
        self.events: list[bytes] = []
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout_s: float = 15.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    async def _read(self, url: str, reader: Any) -> None:
        rx = pytak.RXWorker(asyncio.Queue(), section(url), reader)
        while True:
            data = await rx.readcot()
            if data:
                with self._lock:
                    self.events.append(bytes(data))
            elif getattr(reader, "at_eof", lambda: False)():
                return

    def received(self, marker: bytes = b"") -> list[bytes]:
        with self._lock:
            return [e for e in self.events if marker in e]

    def wait_for(self, marker: bytes, count: int = 1, timeout_s: float = 20.0) -> list[bytes]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self.received(marker)
            if len(found) >= count:
                return found
            time.sleep(0.01)
        raise AssertionError(f"{count} event(s) with {marker!r} not received in {timeout_s} s; got {self.events}")

    def close(self) -> None:
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        self.run(cancel_all())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class UdpReceiver(Peer):
    """pytak's UDP client, read-only, on 127.0.0.1:port: what the mesh would deliver."""

    def __init__(self, port: int) -> None:
        super().__init__()
        url = f"udp+ro://127.0.0.1:{port}"

        async def open_() -> None:
            reader, _ = await pytak.protocol_factory(section(url))
            self.loop.create_task(self._read(url, reader))
        self.run(open_())


class TcpListener(Peer):
    """A CoT listener on 127.0.0.1:port (what a TAK server's streaming port is to tcccd), read with pytak's
    RXWorker; `down()` closes it and every connection, `up()` opens it again."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port
        self.server: asyncio.AbstractServer | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        await self._read(f"tcp://127.0.0.1:{self.port}", reader)

    def up(self) -> TcpListener:
        async def start() -> None:
            self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.run(start())
        return self

    def send_to_clients(self, data: bytes) -> None:
        async def send() -> None:
            for writer in self.writers:
                writer.write(data)
                await writer.drain()
        self.run(send())

    def down(self) -> None:
        async def stop() -> None:
            if self.server is not None:
                self.server.close()
            for writer in self.writers:
                writer.close()
            self.writers.clear()
        self.run(stop())


class TakClient(Peer):
    """A TAK server's client (pytak over TCP), announced by its own position report, reading what it relays."""

    def __init__(self, port: int, uid: str, callsign: str) -> None:
        super().__init__()
        url = f"tcp://127.0.0.1:{port}"

        async def open_() -> None:
            reader, writer = await pytak.protocol_factory(section(url))
            writer.write(position_report(uid, callsign))
            await writer.drain()
            self.writer = writer
            self.loop.create_task(self._read(url, reader))
        self.run(open_())

    def send(self, data: bytes) -> None:
        async def write() -> None:
            self.writer.write(data)
            await self.writer.drain()
        self.run(write())


def wait(predicate: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)
