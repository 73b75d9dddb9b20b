"""TLS with the unit's .p12 against a real TLS peer on loopback: a TAK server's streaming port (stdlib ssl, a client
certificate from its CA required) that records what it receives, read with pytak's RXWorker. The PKI is made fresh
in tmp_path (tests.support.pki). What an operator meets: the server sees the unit's certificate and gets the
CASEVAC; a server whose certificate is not from the configured CA gets nothing, the status line says why, the
request waits and leaves once a good server is there; a wrong .p12 password is a line that names the file."""

from __future__ import annotations

import datetime
import re
import time

import pytest

from tcccd.wire.tak import CardSendReply
from tests.card.test_card_daemon import say
from tests.support.daemon import DaemonProcess, free_port
from tests.support.pki import Pki
from tests.support.rawclient import RawClient, header
from tests.support.tak_peers import SlowLink, TcpListener
from tests.tak.conftest import medevac
from tests.tak.test_tak_daemon import BLAST, card_events, daemon_with_tak


def card_send(daemon: DaemonProcess) -> CardSendReply:
    """`card.send` over a raw socket: exactly one final reply."""
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("card.send", "s1", final=True, data={"by": "tablet-2"}))
        raw.collect(until=lambda: raw.finals("s1"))
        final = raw.final("s1")
    assert final["type"] == "card.send" and len(raw.replies["s1"]) == 1, raw.replies
    return CardSendReply.from_data(final["data"])


def tak_line(daemon: DaemonProcess, predicate) -> dict:
    return daemon.wait_for(lambda r: predicate(r["tak"]))["tak"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_over_tls_the_server_sees_the_unit_s_certificate_and_gets_the_casevac(tmp_path, host):
    pki = Pki(tmp_path / "pki")
    port = free_port()
    server = TcpListener(port, pki.server_context()).up()
    daemon = daemon_with_tak(tmp_path, f"tls://{host}:{port}", tls=pki.tls_settings())
    try:
        tak = tak_line(daemon, lambda t: t["connected"])
        assert tak["line"].startswith(f"tak: connected to tls://{host}:{port} since ") and tak["error"] is None
        say(daemon, *BLAST)
        card_events(daemon, 12)
        reply = card_send(daemon)
        [event] = server.wait_for(reply.uid.encode())
        assert [p["commonName"] for p in server.peers] == ["DOC-7-kit"]  # the unit's certificate, one connection
        assert b'type="t-x-d-d"' in server.received()[0]  # pytak's hello announced the kit first
        root, node, mists = medevac(event)
        assert root.get("type") == "b-r-f-h-c" and root.get("uid") == reply.uid and root.get("how") == "h-e"
        assert {k: v for k, v in node.attrib.items() if k not in ("title", "medline_remarks")} == {
            "urgent": "1", "priority": "1", "litter": "1", "ambulatory": "1"}
        assert node.get("title") == f"CASEVAC M{reply.mission} C1+2"
        assert mists["ZMIST1"]["m"] == "IED" and "TQ right leg: 0958" in mists["ZMIST1"]["t"]
        assert mists["ZMIST2"]["m"] == "blast" and "t" not in mists["ZMIST2"]
        tak = tak_line(daemon, lambda t: t["sent"] == 1)
        assert tak["connected"] and tak["queued"] == 0 and tak["line"].endswith("; 0 queued"), tak
        assert "tak: connected to" in daemon.cli("status").stdout
    finally:
        daemon.stop()
        server.down()
        server.close()


def test_a_server_not_from_the_configured_ca_gets_nothing_and_the_request_waits_for_a_good_one(tmp_path):
    pki, rogue = Pki(tmp_path / "pki"), Pki(tmp_path / "rogue", name="rogue")
    port = free_port()
    impostor = TcpListener(port, rogue.server_context(client_ca=pki)).up()  # it would take the unit's certificate
    daemon = daemon_with_tak(tmp_path, f"tls://127.0.0.1:{port}", tls=pki.tls_settings())
    good = TcpListener(port, pki.server_context())
    try:
        tak = tak_line(daemon, lambda t: t["error"] not in (None, "starting"))
        assert not tak["connected"]
        assert re.fullmatch(r"the server's certificate is not trusted \(certificate verify failed: self.signed "
                            r"certificate in certificate chain\), checked against tak.tls.ca_file " +
                            re.escape(str(pki.ca_file)), tak["error"]), tak
        assert tak["line"].startswith(f"tak: not connected to tls://127.0.0.1:{port} ({tak['error']}); retry in ")
        say(daemon, *BLAST[:2])
        card_events(daemon, 4)
        reply = card_send(daemon)
        assert reply.state == "queued" and reply.link.startswith("tak: not connected") and "1 queued" in reply.link
        time.sleep(1.5)  # several retries against the impostor
        assert impostor.received() == [] and impostor.peers == []  # no byte of the card reached it

        impostor.down()
        good.up()
        [event] = good.wait_for(reply.uid.encode())
        tak = tak_line(daemon, lambda t: t["sent"] == 1 and t["queued"] == 0)
        assert tak["connected"] and tak["error"] is None
        time.sleep(1.5)  # a retry had its chance to send it twice
        assert len(good.received(reply.uid.encode())) == 1 and medevac(event)[2]["ZMIST1"]["m"] == "IED"
        assert impostor.received() == []
    finally:
        daemon.stop()
        for server in (impostor, good):
            server.down()
            server.close()


def test_a_wrong_p12_password_is_a_line_naming_the_file_and_fixing_the_file_connects(tmp_path):
    pki = Pki(tmp_path / "pki")
    wrong = tmp_path / "pki" / "wrong.pass"
    wrong.write_text("not-the-password\n")
    port = free_port()
    server = TcpListener(port, pki.server_context()).up()
    daemon = daemon_with_tak(tmp_path, f"tls://127.0.0.1:{port}", tls=pki.tls_settings(wrong))
    try:
        tak = tak_line(daemon, lambda t: t["error"] not in (None, "starting"))
        assert tak["error"] == (f"cannot open tak.tls.client_cert {pki.client_p12} with the password in "
                                f"tak.tls.password_file {wrong}: wrong password, or not a PKCS#12 file"), tak
        assert tak["line"].startswith(f"tak: not connected to tls://127.0.0.1:{port} ({tak['error']})")
        assert "Traceback" not in daemon.logs() and daemon.wait_healthy()
        say(daemon, *BLAST[:2])
        card_events(daemon, 4)
        reply = card_send(daemon)
        assert reply.state == "queued" and server.received() == [] and server.peers == []

        wrong.write_text(pki.password + "\n")  # the operator fixes the file: the next retry reads it
        [event] = server.wait_for(reply.uid.encode())
        assert [p["commonName"] for p in server.peers] == ["DOC-7-kit"] and medevac(event)[2]["ZMIST1"]["m"] == "IED"
        assert tak_line(daemon, lambda t: t["sent"] == 1)["connected"]
        assert "Traceback" not in daemon.logs()
    finally:
        daemon.stop()
        server.down()
        server.close()


def test_a_server_that_refuses_the_unit_s_expired_certificate_is_not_sent_to_and_a_new_p12_is_taken(tmp_path):
    """On TLS 1.3 the server checks the unit's certificate after the client's handshake is over: the connection
    "opens", then ends. Nothing may be marked sent on it."""
    yesterday = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)
    pki = Pki(tmp_path / "pki", client_not_after=yesterday)
    port, relay_port = free_port(), free_port()
    server = TcpListener(port, pki.server_context()).up()
    relay = SlowLink(relay_port, port, delay_s=0.2)  # the server's refusal arrives after the kit could write
    daemon = daemon_with_tak(tmp_path, f"tls://127.0.0.1:{relay_port}", tls=pki.tls_settings())
    try:
        tak = tak_line(daemon, lambda t: t["error"] not in (None, "starting"))
        assert tak["error"] == ("the server ended the connection right after the TLS handshake: it did not accept "
                                f"the unit's certificate tak.tls.client_cert {pki.client_p12} (expired, revoked, or "
                                f"not from its CA?)"), tak
        say(daemon, *BLAST[:2])
        card_events(daemon, 4)
        reply = card_send(daemon)
        assert reply.state == "queued"
        time.sleep(1.5)  # several connections that the server ended
        tak = daemon.wait_for(lambda r: True)["tak"]
        assert (tak["sent"], tak["queued"], tak["connected"]) == (0, 1, False), tak  # not marked sent, not lost
        assert server.received() == [] and server.peers == []

        pki.renew_client()  # the unit is enrolled again: the next retry reads the new .p12
        [event] = server.wait_for(reply.uid.encode())
        assert [p["commonName"] for p in server.peers] == ["DOC-7-kit"] and medevac(event)[2]["ZMIST1"]["m"] == "IED"
        assert tak_line(daemon, lambda t: t["sent"] == 1 and t["queued"] == 0)["connected"]
    finally:
        daemon.stop()
        server.down()
        server.close()
        relay.close()
