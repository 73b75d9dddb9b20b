"""Through a real TAK server on loopback (FreeTAKServer from PyPI, in its own venv): tcccd's CASEVAC reaches another
client of the server, and the marker stands where the medic's own TAK device says it is, read from the server's
feed. Skips, saying how to install the server, when it is not installed (tests/support/takserver.py)."""

from __future__ import annotations

import time

import pytest

from tcccd.wire.client import RequestFailed
from tcccd.wire.tak import CardSendReply
from tests.card.test_card_daemon import say
from tests.support import takserver
from tests.support.daemon import DaemonProcess, make_config
from tests.support.tak_peers import TakClient, position_report
from tests.tak.conftest import medevac
from tests.tak.test_tak_daemon import BLAST, ROUTES, STAGES, card_events

pytestmark = [pytest.mark.slow, pytest.mark.skipif(takserver.available() is not None,
                                                   reason=str(takserver.available()))]


def test_a_casevac_relayed_by_the_tak_server_placed_by_the_medics_own_device(tmp_path):
    server = takserver.FreeTakServer(tmp_path).start()
    team, medic = TakClient(server.cot_port, "ANDROID-team-1", "BRAVO-2"), None
    daemon = DaemonProcess(tmp_path, make_config(tmp_path, STAGES, ROUTES, top={"tak": {
        "enabled": True, "url": f"tcp://127.0.0.1:{server.cot_port}", "kit_uid": "kit-7", "callsign": "DOC-7",
        "gpsd": {"enabled": False}, "retry_initial_s": 0.2, "retry_max_s": 1.0}}))
    try:
        daemon.wait_healthy()
        daemon.wait_for(lambda r: r["tak"]["connected"])
        say(daemon, *BLAST)
        card_events(daemon, 12)
        with daemon.client() as client, pytest.raises(RequestFailed) as refused:
            client.call("card.send")
        assert refused.value.code == "no_position" and "TAK device: its position not heard yet" in str(refused.value)
        medic = TakClient(server.cot_port, "ANDROID-doc-7", "DOC-7")

        def reported(report) -> bool:  # the device reports its position every second, as ATAK does (less often)
            medic.send(position_report("ANDROID-doc-7", "DOC-7", lat=35.1234, lon=-117.5678))
            time.sleep(1.0)
            return report["tak"]["position_source"] == "TAK device DOC-7"
        report = daemon.wait_for(reported)
        assert report["tak"]["position_problem"] is None
        with daemon.client() as client:
            reply = CardSendReply.from_message(client.call("card.send"))
        [event] = team.wait_for(reply.uid.encode())
        root, node, mists = medevac(event)
        assert (root.find("point").get("lat"), root.find("point").get("lon")) == ("35.1234", "-117.5678")
        assert node.get("urgent") == "1" and node.get("priority") == "1" and mists["ZMIST1"]["m"] == "IED"
    finally:
        daemon.stop()
        for peer in (team, medic):
            if peer is not None:
                peer.close()
        server.stop()
