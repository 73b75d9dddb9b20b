"""The keys a client needs for a daemon that requires CurveZMQ (a kit listening beyond loopback).

Kept apart from the client's requests and replies (tcccd.wire.client), which
apply them to every socket they open; docs/protocol.md ("Authentication") says
where the files come from (`tcccd keys generate`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth


@dataclass(frozen=True)
class CurveKeys:
    """What a client needs for a daemon that requires CurveZMQ: its own key pair and the server's public key."""

    client_public: bytes
    client_secret: bytes
    server_public: bytes

    @classmethod
    def from_files(cls, client_secret_file: str | Path, server_public_file: str | Path) -> CurveKeys:
        """zmq.auth certificate files, as `tcccd keys generate` writes them."""
        public, secret = zmq.auth.load_certificate(str(client_secret_file))
        if secret is None:
            raise ValueError(f"{client_secret_file} holds no secret key: give the client's .key_secret file")
        server_public, _ = zmq.auth.load_certificate(str(server_public_file))
        return cls(public, secret, server_public)

    @classmethod
    def from_env(cls) -> CurveKeys | None:
        """Keys named by TCCCD_CURVE_CLIENT_KEY and TCCCD_CURVE_SERVER_KEY, or None when they are not set."""
        client, server = os.environ.get("TCCCD_CURVE_CLIENT_KEY"), os.environ.get("TCCCD_CURVE_SERVER_KEY")
        return cls.from_files(client, server) if client and server else None

    def apply(self, sock: zmq.Socket) -> None:
        sock.curve_publickey = self.client_public
        sock.curve_secretkey = self.client_secret
        sock.curve_serverkey = self.server_public
