"""The small parts: the XML validates as CoT through takproto (XML and protobuf), the spoken command's grammar, gpsd's
reports (a gpsd on loopback speaking its JSON protocol: the boundary with the GNSS receiver), the TAK device's position
picked from the feed, and the config refusing what is not secure."""

from __future__ import annotations

import asyncio
import json
import time
import xml.etree.ElementTree as ET

import pytest
import takproto

from tcccd import config as cfg
from tcccd.tak import gpsd
from tcccd.tak.casevac import casevac
from tcccd.tak.commands import Command, parse, readback
from tcccd.tak.cot import to_xml
from tcccd.tak.feed import device_point
from tests.support.tak_peers import position_report
from tests.tak.conftest import projector_of


@pytest.mark.parametrize("version", [takproto.TAKProtoVer.MESH, takproto.TAKProtoVer.STREAM])
def test_the_casevac_round_trips_through_tak_protocol_version_1(tmp_path, point, version):
    xml = to_xml(casevac(projector_of("blast_two_casualties", tmp_path).cards(), 1, "kit"), point, time.time(), 600)
    message = takproto.parse_proto(takproto.xml2proto(xml.decode(), version))
    event, original = message.cotEvent, ET.fromstring(xml)
    assert (event.type, event.uid, event.how) == ("b-r-f-h-c", original.get("uid"), "m-g")
    assert (event.lat, event.lon, event.ce) == (point.lat, point.lon, point.ce_m)
    assert event.detail.contact.callsign == "CASEVAC M1 C1+2"
    carried = ET.fromstring(f"<detail>{event.detail.xmlDetail}</detail>").find("_medevac_")
    assert ET.tostring(carried) == ET.tostring(original.find("detail/_medevac_"))


@pytest.mark.parametrize(("said", "command"), [
    ("Send nine line.", Command("ask", "nine line")), ("Send 9-line.", Command("ask", "nine line")),
    ("Send MIST.", Command("ask", "MIST")), ("send nine line for casualty 2", Command("ask", "nine line", 2)),
    ("Send nine line for casualty two.", Command("ask", "nine line", 2)), ("Send.", Command("confirm")),
    ("Send it.", Command("confirm")), ("Cancel.", Command("cancel")),
    ("Say send to confirm.", None), ("Send more gauze.", None), ("Send nine line for casualty fox.", None),
    ("Casualty one, send nine line.", None), ("Tourniquet applied, send.", None)])
def test_a_command_is_the_whole_utterance(said, command):
    assert parse(said) == command


def test_the_read_back_says_the_counts_and_what_waits(tmp_path):
    cards = projector_of("negations_corrections", tmp_path).cards()
    request = casevac(cards, 1, "kit")
    assert readback(request, "nine line") == ("Nine line for casualty one: routine one. Two entries awaiting your "
                                              "check not sent.")
    assert readback(request, "MIST").startswith("MIST for casualty one: mechanism, injuries, signs, treatments.")


def test_gpsd_reports_a_fix_and_says_when_there_is_none():
    async def run() -> tuple[list, list]:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            assert (await reader.readline()).startswith(b"?WATCH=")
            for report in ({"class": "VERSION", "release": "3.22"}, {"class": "TPV", "mode": 1},
                           {"class": "SKY", "satellites": []}, {"class": "PPS"},
                           {"class": "TPV", "mode": 3, "lat": 34.1, "lon": -118.2, "altHAE": 80.5, "epx": 3.0,
                            "epy": 4.5, "epv": 9.0}):
                writer.write(json.dumps(report).encode() + b"\n")
            writer.write(b"not json\n")
            await writer.drain()
            writer.close()
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        fixes, problems = [], []
        await gpsd.watch(server.sockets[0].getsockname()[1], fixes.append, problems.append)
        server.close()
        return fixes, problems
    fixes, problems = asyncio.run(run())
    [fix] = fixes
    assert (fix.lat, fix.lon, fix.hae_m, fix.ce_m, fix.le_m, fix.how) == (34.1, -118.2, 80.5, 4.5, 9.0, "m-g")
    assert "gpsd reports no fix (mode 1)" in problems and problems[-1].endswith("closed the connection")


def test_no_gpsd_is_said_not_raised():
    problems: list[str] = []
    asyncio.run(gpsd.watch(1, lambda p: None, problems.append))
    assert problems and problems[0].startswith("no gpsd on 127.0.0.1:1")


def test_the_medics_device_is_picked_from_the_feed_by_callsign_or_uid_and_nothing_else():
    report = position_report("ANDROID-1", "DOC-7", lat=35.5, lon=-117.25)
    point = device_point(report, "DOC-7", None, time.time())
    assert point is not None and (point.lat, point.lon, point.ce_m, point.source) == (35.5, -117.25, 5.0,
                                                                                     "TAK device DOC-7")
    assert device_point(report, None, "ANDROID-1", time.time()) is not None
    assert device_point(report, "OTHER", "ANDROID-2", time.time()) is None
    assert device_point(report.replace(b"a-f-G-U-C", b"b-r-f-h-c"), "DOC-7", None, time.time()) is None
    assert device_point(position_report("ANDROID-1", "DOC-7", lat=0.0, lon=0.0), "DOC-7", None, 0.0) is None
    assert device_point(b"<event><not closed", "DOC-7", None, 0.0) is None


@pytest.mark.parametrize(("tak", "says"), [
    ({"enabled": True, "url": "tcp://10.0.0.5:8087"}, "allowed to loopback only"),
    ({"enabled": True, "url": "tls://tak.example:8089"}, "tak.tls.client_cert"),
    ({"enabled": True, "url": "udp://239.2.3.1:6969"}, "allow_plain_mesh"),
    ({"enabled": True, "url": "http://tak.example"}, "expected tls://HOST:PORT")])
def test_the_config_refuses_what_is_not_secure(tak, says):
    with pytest.raises(cfg.ConfigError) as refused:
        cfg.parse({"tak": tak}, "test.yaml")
    assert says in str(refused.value)


def test_tak_is_off_by_default_and_accepts_tls_and_the_mesh_when_asked():
    assert cfg.parse({}, "test.yaml").tak.enabled is False
    ok = cfg.parse({"tak": {"enabled": True, "url": "tls://tak.example:8089", "tls": {
        "client_cert": "/etc/tcccd/unit.p12", "ca_file": "/etc/tcccd/tak-ca.pem"}}}, "t.yaml")
    assert ok.tak.transport == "tls"
    mesh = cfg.parse({"tak": {"enabled": True, "url": "udp://239.2.3.1:6969", "allow_plain_mesh": True}}, "t.yaml")
    assert mesh.tak.transport == "udp"
