"""The daemon's three sockets to its workers, one per role, as in jupyter_client.

`data` carries requests and their outputs; `control` carries readiness, profile
switches, memory releases and shutdown; `heartbeat` carries pings (answered by a
thread of the worker's own, so a long computation is not a hang) and cancels
(read by that thread at once, so a running plugin can stop cooperatively). All
three are ROUTERs over ipc:// in the runtime directory; a worker's DEALERs carry
its identity `name:generation`, so messages of a replaced generation are
recognised and ignored.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import zmq

from tcccd.core.workers import WorkerHandle
from tcccd.wire.protocol import Message

ROLES = ("data", "control", "heartbeat")


class WorkerLinks:
    def __init__(self, runtime_dir: Path) -> None:
        self.endpoints = {role: f"ipc://{runtime_dir}/workers-{role}.sock" for role in ROLES}
        self.sockets: dict[str, zmq.Socket] = {}

    def bind(self, ctx: zmq.Context) -> None:
        for role, endpoint in self.endpoints.items():
            sock = ctx.socket(zmq.ROUTER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.ROUTER_MANDATORY, 1)  # a worker not connected (yet, or any more) raises
            sock.bind(endpoint)
            self.sockets[role] = sock

    @property
    def data(self) -> zmq.Socket:
        return self.sockets["data"]

    @property
    def control(self) -> zmq.Socket:
        return self.sockets["control"]

    @property
    def heartbeat(self) -> zmq.Socket:
        return self.sockets["heartbeat"]

    def spec(self) -> dict[str, str]:
        """The endpoints as a worker's spec file names them."""
        return {f"{role}_endpoint": endpoint for role, endpoint in self.endpoints.items()}

    def send_data(self, handle: WorkerHandle, message: Message) -> bool:
        """A request message for one of the worker's stages; False when the worker is not connected."""
        try:
            self.data.send_multipart([handle.identity, *message.to_frames()], zmq.NOBLOCK)
        except zmq.ZMQError:
            return False
        return True

    def send(self, handle: WorkerHandle, message: Message, role: str = "control") -> None:
        """A control or heartbeat message. Not connected yet, or gone: the heartbeat deadline catches a dead
        worker, so a lost message here is not an error."""
        with contextlib.suppress(zmq.ZMQError):
            self.sockets[role].send_multipart([handle.identity, *message.to_frames()], zmq.NOBLOCK)
