"""The cards on the TAK network through a running daemon: `card.send` and the spoken "send nine line" reach a pytak
receiver, a command is never a fact on the card, no confirmation sends nothing, and a server that is down gets the
request once it is back, exactly once (also across kill -9). The ASR is stood in by tests.support.scribe."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest

from tcccd.wire.tak import CardSendReply, CardSendsReply
from tests.card.test_card_daemon import say
from tests.support.daemon import DaemonProcess, free_port, make_config
from tests.support.rawclient import RawClient, header
from tests.support.scribe import SCRIBE
from tests.support.tak_peers import TcpListener, UdpReceiver
from tests.tak.conftest import medevac

STAGES = [{"name": "asr", "plugin": SCRIBE}, {"name": "card", "plugin": "card"}]
ROUTES = {"transcribe": ["asr"], "card.extract": ["card"]}
BLAST = ("Casualty one, IED blast. Bilateral lower leg amputations.",
         "Tourniquets on both legs at zero nine fifty eight.",
         "Casualty two, same blast, shrapnel wounds to the right arm and face.",
         "Back to casualty one. Pulse one forty.", "Casualty one, urgent, litter. Casualty two, priority, ambulatory.")


def daemon_with_tak(tmp_path, url: str, **tak) -> DaemonProcess:
    settings = {"enabled": True, "url": url, "kit_uid": "kit-7", "gpsd": {"enabled": False},
                "fixed_point": {"lat": 34.05, "lon": -118.25, "ce_m": 20.0}, "confirm_window_s": 2.0,
                "retry_initial_s": 0.2, "retry_max_s": 1.0, **tak}
    daemon = DaemonProcess(tmp_path, make_config(tmp_path, STAGES, ROUTES, top={"tak": settings}))
    daemon.wait_healthy()
    return daemon


def card_events(daemon, count: int) -> int:
    """The card's events once every journalled transcript has been through the card stage (at least `count`)."""
    daemon.wait_for(lambda r: r["card"]["waiting"] == 0 and r["card"]["events"] >= count, timeout_s=20)
    with daemon.client() as client:
        return client.call("card.get").data["events"]


@pytest.fixture
def on_udp(tmp_path) -> Iterator[tuple[DaemonProcess, UdpReceiver, int]]:
    """A daemon sending to a pytak UDP receiver on loopback (what the mesh would deliver)."""
    port = free_port()
    receiver = UdpReceiver(port)
    daemon = daemon_with_tak(tmp_path, f"udp+wo://127.0.0.1:{port}")
    try:
        yield daemon, receiver, port
    finally:
        daemon.stop()
        receiver.close()


def test_card_send_reaches_a_pytak_receiver_field_by_field_and_tcccd_card_shows_it(on_udp):
    daemon, receiver, port = on_udp
    say(daemon, *BLAST)
    card_events(daemon, 12)
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("card.send", "s1", final=True, data={"by": "tablet-2"}))
        raw.collect(until=lambda: raw.finals("s1"))
        final = raw.final("s1")
    assert final["type"] == "card.send" and len(raw.replies["s1"]) == 1
    reply = CardSendReply.from_data(final["data"])
    assert reply.casualties == [1, 2] and reply.position_source == "fixed point" and reply.by == "tablet-2"
    [event] = receiver.wait_for(reply.uid.encode())
    root, node, mists = medevac(event)
    assert root.find("point").get("lat") == "34.05" and root.get("how") == "h-e"
    assert {k: v for k, v in node.attrib.items() if k not in ("title", "medline_remarks")} == {
        "urgent": "1", "priority": "1", "litter": "1", "ambulatory": "1"}
    assert mists["ZMIST1"]["m"] == "IED" and mists["ZMIST2"]["m"] == "blast"
    assert mists["ZMIST1"]["s"] == "Pulse 140 (logged " + mists["ZMIST1"]["s"].split("logged ")[1]
    assert "TQ right leg: 0958" in mists["ZMIST1"]["t"] and "t" not in mists["ZMIST2"]
    shown = daemon.cli("card").stdout
    assert f"to udp+wo://127.0.0.1:{port}: casualty 1, 2 (uid {reply.uid})" in shown and "by tablet-2" in shown


def test_spoken_send_is_read_back_and_sent_only_on_send_and_never_reaches_the_card(on_udp):
    daemon, receiver, _ = on_udp
    say(daemon, *BLAST)
    events = card_events(daemon, 12)
    say(daemon, "Send nine line for casualty two.")
    report = daemon.wait_for(lambda r: r["tak"]["awaiting_confirmation"])
    assert report["tak"]["awaiting_confirmation"] == "nine line read back, waiting for 'send'"
    time.sleep(0.5)
    assert receiver.received() == []  # read back, not sent
    say(daemon, "Send.")
    [event] = receiver.wait_for(b"b-r-f-h-c")
    _, node, mists = medevac(event)
    assert set(mists) == {"ZMIST2"} and node.get("priority") == "1" and "urgent" not in node.attrib
    with daemon.client() as client:
        sends = CardSendsReply.from_message(client.call("card.sends")).sends
        assert client.call("card.get").data["events"] == events  # neither command is a fact on the card
    assert [(s.via, s.by, s.casualties, s.state) for s in sends] == [("voice", "medic", [2], "sent")]
    assert sends[0].summary == "Nine line for casualty two: priority one, ambulatory one."

    say(daemon, "Send nine line.")  # and no confirmation
    daemon.wait_for(lambda r: r["tak"]["awaiting_confirmation"])
    daemon.wait_for(lambda r: not r["tak"]["awaiting_confirmation"], timeout_s=10)
    say(daemon, "Send.")  # too late: nothing waits for it
    time.sleep(1.0)
    assert len(receiver.received(b"b-r-f-h-c")) == 1
    with daemon.client() as client:
        assert len(CardSendsReply.from_message(client.call("card.sends")).sends) == 1
    assert "CASEVAC not confirmed in time: nothing sent" in daemon.logs()


def test_a_server_down_gets_the_request_once_it_is_back_exactly_once_even_across_kill_9(tmp_path):
    port = free_port()
    listener = TcpListener(port)
    daemon = daemon_with_tak(tmp_path, f"tcp://127.0.0.1:{port}")
    try:
        say(daemon, *BLAST[:2])
        card_events(daemon, 4)
        with daemon.client() as client:
            reply = CardSendReply.from_message(client.call("card.send"))
        assert reply.state == "queued"
        assert reply.link.startswith(f"tak: not connected to tcp://127.0.0.1:{port} (") and "1 queued" in reply.link
        report = daemon.wait_for(lambda r: "ConnectionRefused" in (r["tak"]["error"] or ""))
        assert report["tak"]["line"].startswith("tak: not connected") and report["tak"]["queued"] == 1

        daemon.proc.send_signal(signal.SIGKILL)  # the request is in the send log, not in memory
        daemon.proc.wait(10)
        daemon = DaemonProcess(tmp_path, make_config(tmp_path, STAGES, ROUTES, top={"tak": {
            "enabled": True, "url": f"tcp://127.0.0.1:{port}", "kit_uid": "kit-7", "gpsd": {"enabled": False},
            "fixed_point": {"lat": 34.05, "lon": -118.25}, "retry_initial_s": 0.2, "retry_max_s": 1.0}}))
        daemon.wait_healthy()
        listener.up()
        [event] = listener.wait_for(reply.uid.encode())
        daemon.wait_for(lambda r: r["tak"]["sent"] == 1 and r["tak"]["queued"] == 0 and r["tak"]["connected"])
        time.sleep(2.0)  # retries and the restart had their chance to send it twice
        assert len(listener.received(reply.uid.encode())) == 1
        assert medevac(event)[2]["ZMIST1"]["m"] == "IED"
    finally:
        daemon.stop()
        listener.down()
        listener.close()
