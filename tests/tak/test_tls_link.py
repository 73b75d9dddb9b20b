"""The TAK link's TLS (tcccd.tak.link with tcccd.tak.tls) against a TLS peer on loopback, without a daemon: the
server's name, the unit's certificate in the forms an operator gets it (a .pfx, a file tcccd may only read, PEM),
and the files that are not there."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from tcccd.tak.link import Outgoing, Sent, TakLink
from tcccd.tak_settings import TakSettings
from tests.support.daemon import free_port
from tests.support.pki import Pki
from tests.support.tak_peers import TcpListener

EVENT = b'<event version="2.0" uid="kit-7.casevac.1" type="b-r-f-h-c" how="h-e" time="2026-01-01T00:00:00Z" ' \
        b'start="2026-01-01T00:00:00Z" stale="2026-01-02T00:00:00Z"><point lat="1" lon="2" hae="0" ce="9" le="9"/>' \
        b'<detail/></event>'


@contextlib.contextmanager
def link_to(server_port: int, host: str = "127.0.0.1", **tls: str) -> Iterator[TakLink]:
    settings = TakSettings(enabled=True, url=f"tls://{host}:{server_port}", kit_uid="kit-7", tls=tls,
                           gpsd={"enabled": False}, retry_initial_s=0.2, retry_max_s=0.5)
    link = TakLink(settings)
    link.start()
    try:
        yield link
    finally:
        link.stop()


def wait_error(link: TakLink, timeout_s: float = 15.0) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = link.status()
        if state["error"] not in (None, "starting"):
            return state["error"]
        time.sleep(0.02)
    raise AssertionError(f"no error in {timeout_s} s: {link.status()}")


def sent_through(link: TakLink, server: TcpListener) -> None:
    """The event is written to the server, once, and reported sent."""
    link.send(Outgoing(1, EVENT))
    server.wait_for(b"kit-7.casevac.1")
    deadline = time.monotonic() + 10
    reports: list[object] = []
    while not any(isinstance(r, Sent) for r in reports) and time.monotonic() < deadline:
        reports += link.drain()
        time.sleep(0.02)
    assert [r.seq for r in reports if isinstance(r, Sent)] == [1] and link.status()["connected"]
    assert [p["commonName"] for p in server.peers] == ["DOC-7-kit"]


@pytest.fixture
def serving(tmp_path) -> Iterator[tuple[Pki, TcpListener]]:
    pki = Pki(tmp_path / "pki")
    server = TcpListener(free_port(), pki.server_context()).up()
    try:
        yield pki, server
    finally:
        server.down()
        server.close()


def test_a_server_certificate_for_another_name_is_named_and_tak_tls_server_hostname_is_the_way(tmp_path):
    pki = Pki(tmp_path / "pki", server_names=("tak.unit.example",))
    server = TcpListener(free_port(), pki.server_context()).up()
    try:
        with link_to(server.port, **pki.tls_settings()) as link:
            error = wait_error(link)
            assert error.startswith("the server's certificate is not for 127.0.0.1 (certificate verify failed: ")
            assert error.endswith("); set tak.tls.server_hostname to the name in it") and "PYTAK" not in error
            assert server.received() == []
        with link_to(server.port, **pki.tls_settings(), server_hostname="tak.unit.example") as link:
            sent_through(link, server)
    finally:
        server.down()
        server.close()


def test_a_pfx_is_a_pkcs12_whatever_its_name(serving, tmp_path):
    pki, server = serving
    pfx = tmp_path / "unit.pfx"
    shutil.copy(pki.client_p12, pfx)
    with link_to(server.port, **{**pki.tls_settings(), "client_cert": str(pfx)}) as link:
        sent_through(link, server)


def test_a_pem_certificate_and_an_encrypted_key(serving, tmp_path):
    pki, server = serving
    cert, key = tmp_path / "unit.pem", tmp_path / "unit.key"
    cert.write_bytes(pki.client.cert.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(pki.client.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.BestAvailableEncryption(pki.password.encode())))
    with link_to(server.port, client_cert=str(cert), client_key=str(key), password_file=str(pki.password_file),
                 ca_file=str(pki.ca_file)) as link:
        sent_through(link, server)


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """`path` that this process cannot open for writing (root: immutable), as the shipped unit's read-only /etc
    (ProtectSystem=strict) or a .p12 owned by root and readable by tcccd leaves it."""
    path.chmod(0o444)
    immutable = os.geteuid() == 0 and shutil.which("chattr") is not None and \
        subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
    try:
        try:
            path.open("r+b").close()
        except OSError:
            yield
        else:
            pytest.skip("cannot make a file read-only for this process here")
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_p12_that_tcccd_may_only_read_is_used(serving):
    pki, server = serving
    with read_only(pki.client_p12), link_to(server.port, **pki.tls_settings()) as link:
        sent_through(link, server)


def test_a_missing_p12_or_password_file_is_a_line_naming_it(serving, tmp_path):
    pki, server = serving
    with link_to(server.port, **{**pki.tls_settings(), "client_cert": str(tmp_path / "gone.p12")}) as link:
        assert wait_error(link) == f"cannot read tak.tls.client_cert {tmp_path / 'gone.p12'}: No such file or directory"
    with link_to(server.port, **pki.tls_settings(tmp_path / "gone.pass")) as link:
        assert wait_error(link) == f"cannot read tak.tls.password_file {tmp_path / 'gone.pass'}: No such file or " \
                                   f"directory"
    assert server.received() == [] and server.peers == []
