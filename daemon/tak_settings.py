"""`tak:` in the config: whether the casualty cards go to the team's TAK network, where, and how safely.

Off by default. When on, secure by default: a TAK server off this machine is
reached over TLS with the unit's client certificate (the `.p12` a TAK server's
enrolment gives), and the server's certificate is always checked (no option
turns that off). Plain TCP is refused to anything but loopback (tests, a TAK
server on the kit itself). UDP multicast to the team's mesh (ATAK's SA group
239.2.3.1:6969) is unencrypted by the nature of the mesh, so it takes an
explicit `allow_plain_mesh: true`. Where the CASEVAC marker stands: gpsd on this
machine, the medic's own TAK device heard on the feed (`callsign` or
`device_uid`), or `fixed_point`, in that order; none known, nothing is sent.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMES = ("tls", "tcp", "udp")
ATAK_MESH = "udp://239.2.3.1:6969"
KIT_UID = r"^[A-Za-z0-9_.:-]{1,64}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TlsSettings(_Strict):
    client_cert: Path | None = Field(None, description="the unit's client certificate: a .p12 (PKCS#12) from the "
                                     "TAK server's enrolment, or a PEM certificate with `client_key`")
    client_key: Path | None = Field(None, description="PEM private key, when client_cert is a PEM certificate")
    password_file: Path | None = Field(None, description="a file holding the .p12's password (kept out of this "
                                       "config; readable by tcccd only)")
    ca_file: Path | None = Field(None, description="the TAK server's CA certificate (PEM; `openssl pkcs12 -in "
                                 "truststore.p12 -nokeys -out ca.pem`): the server is checked against it")
    server_hostname: str | None = Field(None, max_length=253, description="the name in the server's certificate, "
                                        "when it is not the host in `url`")


class FixedPoint(_Strict):
    lat: float = Field(ge=-90, le=90, description="degrees, WGS 84")
    lon: float = Field(ge=-180, le=180, description="degrees, WGS 84")
    hae_m: float | None = Field(None, description="height above the ellipsoid, metres; absent: unknown")
    ce_m: float | None = Field(None, gt=0, description="circular error, metres; absent: unknown")


class GpsdSettings(_Strict):
    enabled: bool = True
    port: int = Field(2947, ge=1, le=65535, description="gpsd on 127.0.0.1 (only this machine's gpsd is read)")


def _kit_uid(hostname: str) -> str:
    return "tcccd-" + (re.sub(r"[^A-Za-z0-9_.:-]", "-", hostname)[:58] or "kit")


def _is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class TakSettings(_Strict):
    enabled: bool = False
    url: str = Field("", max_length=300, description="tls://HOST:PORT (a TAK server, e.g. port 8089), "
                     "tcp://127.0.0.1:PORT (loopback only), or udp://239.2.3.1:6969 (the mesh)")
    tls: TlsSettings = Field(default_factory=TlsSettings)
    allow_plain_mesh: bool = Field(False, description="let a udp:// url send to the mesh unencrypted")
    protocol: Literal["xml", "protobuf"] = Field("xml", description="CoT as XML (every TAK server and client) or "
                                                 "TAK protocol version 1 (protobuf, via takproto)")
    kit_uid: str = Field(default_factory=lambda: _kit_uid(socket.gethostname()), pattern=KIT_UID,
                         description="this kit's name on the TAK network: every CASEVAC uid starts with it")
    callsign: str | None = Field(None, max_length=64, description="the medic's own TAK device: its position reports "
                                 "on the feed place the marker when gpsd has no fix")
    device_uid: str | None = Field(None, max_length=128, description="the same device by uid")
    gpsd: GpsdSettings = Field(default_factory=GpsdSettings)
    fixed_point: FixedPoint | None = Field(None, description="where the kit is, when neither gpsd nor the TAK "
                                           "device gives a position")
    position_max_age_s: float = Field(120.0, gt=0, description="a position older than this is not used")
    stale_s: float = Field(24 * 3600.0, gt=0, description="how long the CASEVAC marker stays on the map")
    confirm_window_s: float = Field(10.0, gt=0, le=120, description="after the read-back of a spoken 'send nine "
                                    "line', how long a spoken 'send' confirms it")
    confirmed_only: bool = Field(False, description="send only entries the medic confirmed in a review (default: "
                                 "also entries recorded with no doubt; never an unconfirmed one)")
    retry_initial_s: float = Field(1.0, gt=0, description="first reconnect after the server is down or refuses")
    retry_max_s: float = Field(30.0, gt=0, description="cap of the doubling reconnect delay")

    @model_validator(mode="after")
    def _secure(self) -> TakSettings:
        if not self.enabled:
            return self
        parsed = urlparse(self.url)
        scheme, host = parsed.scheme.split("+")[0], parsed.hostname or ""
        if scheme not in SCHEMES or not host or parsed.port is None:
            raise ValueError(f"tak.url {self.url!r}: expected tls://HOST:PORT, tcp://127.0.0.1:PORT or "
                             f"udp://GROUP:PORT (the mesh: {ATAK_MESH})")
        if scheme == "tcp" and not _is_loopback(host):
            raise ValueError(f"tak.url {self.url!r}: plain TCP carries the casualty cards unencrypted and "
                             f"unauthenticated; it is allowed to loopback only. Use tls://{host}:8089 with "
                             f"tak.tls.client_cert (the unit's .p12)")
        if scheme == "tls" and (self.tls.client_cert is None or self.tls.ca_file is None):
            raise ValueError("tak.url is tls:// and needs tak.tls.client_cert (the unit's .p12 from the TAK server's "
                             "enrolment) and tak.tls.ca_file (the server's CA, PEM: the server is always checked)")
        if scheme == "udp" and not _is_loopback(host) and not self.allow_plain_mesh:
            raise ValueError(f"tak.url {self.url!r} sends to the mesh, unencrypted, to anyone on the network; "
                             f"set tak.allow_plain_mesh: true to accept that, or use a TAK server over tls://")
        return self

    @property
    def transport(self) -> str:
        return urlparse(self.url).scheme.split("+")[0]
