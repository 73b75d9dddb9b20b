"""Who may talk to tcccd: loopback by default, CurveZMQ with authorised keys for anything else.

Transcripts are medical data. The client and events endpoints therefore bind to
loopback (or an ipc:// socket) unless the config gives a CurveZMQ server key
pair and a directory of authorised client public keys (zmq.auth's certificate
files, made by `tcccd keys generate`). Binding another address without them is
refused at start with a message that says how to fix it. With keys, every
connection is encrypted and a client whose public key is not in the directory
is refused by ZeroMQ's ZAP handler before any message reaches the broker.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from tcccd.config import DaemonSection

LOOPBACK_NAMES = ("localhost", "ip6-localhost")


class InsecureBind(ValueError):
    """A non-loopback endpoint without CurveZMQ keys."""


def is_local(endpoint: str) -> bool:
    """ipc:// and loopback tcp:// endpoints are reachable only from this machine."""
    scheme, _, address = endpoint.partition("://")
    if scheme == "ipc":
        return True
    host = address.rpartition(":")[0].strip("[]")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a wildcard (*), an interface name or a host name: reachable from outside


class Security:
    """Applies CURVE server options to the daemon's client-facing sockets when keys are configured."""

    def __init__(self, daemon: DaemonSection) -> None:
        self.daemon = daemon
        self.enabled = daemon.curve_secret_key_file is not None
        exposed = [e for e in (daemon.client_endpoint, daemon.events_endpoint) if not is_local(e)]
        if exposed and not self.enabled:
            raise InsecureBind(
                f"refusing to bind {', '.join(exposed)}: it is reachable from other machines and transcripts are "
                f"medical data. Set daemon.curve_secret_key_file and daemon.curve_authorized_dir (make them with "
                f"`tcccd keys generate DIR`), or bind 127.0.0.1 / ipc:// instead")
        if self.enabled and daemon.curve_authorized_dir is None:
            raise InsecureBind("daemon.curve_secret_key_file is set but daemon.curve_authorized_dir is not: "
                               "name the directory of authorised client public keys (*.key)")
        self._auth: ThreadAuthenticator | None = None

    def start(self, ctx: zmq.Context) -> None:
        if not self.enabled:
            return
        assert self.daemon.curve_authorized_dir is not None
        self._auth = ThreadAuthenticator(ctx)
        self._auth.start()
        self._auth.configure_curve(domain="*", location=str(self.daemon.curve_authorized_dir))

    def secure(self, sock: zmq.Socket) -> None:
        """Make `sock` a CURVE server (before bind); a no-op without keys."""
        if not self.enabled:
            return
        assert self.daemon.curve_secret_key_file is not None
        public, secret = zmq.auth.load_certificate(str(self.daemon.curve_secret_key_file))
        if secret is None:
            raise InsecureBind(f"{self.daemon.curve_secret_key_file} holds no secret key: use the "
                               f"server.key_secret file that `tcccd keys generate` wrote")
        sock.curve_secretkey = secret
        sock.curve_publickey = public
        sock.curve_server = True

    def stop(self) -> None:
        if self._auth is not None:
            self._auth.stop()


def generate(directory: Path, client_name: str = "client") -> dict[str, Path]:
    """A server key pair and one client key pair in `directory`, secrets readable by the owner only."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    authorized = directory / "authorized"
    authorized.mkdir(exist_ok=True)
    server_public, server_secret = zmq.auth.create_certificates(str(directory), "server")
    client_public, client_secret = zmq.auth.create_certificates(str(directory), client_name)
    for secret in (server_secret, client_secret):
        Path(secret).chmod(0o600)
    allowed = authorized / Path(client_public).name
    allowed.write_bytes(Path(client_public).read_bytes())
    return {"server_secret": Path(server_secret), "server_public": Path(server_public),
            "client_secret": Path(client_secret), "authorized_dir": authorized}
