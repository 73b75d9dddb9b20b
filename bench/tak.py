"""Claims: a CASEVAC reaches the team through a TAK server on loopback within 1 s of the medic's confirmation (p99),
and it carries every field of the expected card the 9-line and ZMIST can carry and nothing else.

Time (needs FreeTAKServer in .venv-takserver, tests/support/takserver.py): one daemon (the card stage, the ASR
stood in by tests.support.scribe), FreeTAKServer on loopback, and a second pytak client of the server (the team).
Interleaved trial by trial: the reference, a pytak client's own event relayed by the server to the team (the
server's floor); `card.send` (a typed confirmation) from the request to the team's receipt; a spoken "Send."
(after "Send nine line." was read back) from the transcript request to the team's receipt.
Fields (no server): each scenario of tests/data/card through the card stage and projection, the CASEVAC built as
`card.send` builds it; its fields against the scenario's expected card, restricted to what a CASEVAC carries
(header precedence, litter/ambulatory, roster number, last four; B; the latest reading of each vital sign; E; F),
an expected field shown unconfirmed counted as one that must be absent. Tuning and held-out sets apart.
Usage: python bench/tak.py [--trials 30] [--json bench/out/tak.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from harness import percentiles

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tcccd.tak.casevac import casevac  # noqa: E402
from tcccd.tak.cot import Point, to_xml  # noqa: E402
from tcccd.tak.sendable import sendable  # noqa: E402
from tcccd.wire.card import CardSet  # noqa: E402
from tests.support.card_fields import expected_fields, fields  # noqa: E402
from tests.support.card_scenarios import CardPipeline, scenarios  # noqa: E402

KIT = b'uid="bench-kit.casevac.'
CARRIED_HEADER = ("evac_category", "mobility", "battle_roster", "last_four")
VITAL = re.compile(r"^(c\d+) c vitals\[~?(\d{4})\]\.([a-z0-9]+?)(?:_location)? = ")  # lines are lower-case


def carried(lines: set[str]) -> tuple[set[str], set[str]]:
    """(fields a CASEVAC must carry, fields it must not): expected lines of the sections it carries; of the vital
    signs only each one's latest column; a line shown unconfirmed must not be carried."""
    latest: dict[tuple[str, str], str] = {}
    for line in lines:
        if (m := VITAL.match(line)) is not None:
            key = (m.group(1), m.group(3))
            latest[key] = max(latest.get(key, "0000"), m.group(2))
    must, must_not = set(), set()
    for line in lines:
        section = line.split()[1].upper()
        if section == "A":
            keep = any(f"header.{name} =" in line for name in CARRIED_HEADER)
        elif section == "C":
            m = VITAL.match(line)
            keep = m is not None and latest[(m.group(1), m.group(3))] == m.group(2)
        else:
            keep = section in "BEF"
        if keep:
            (must_not if line.endswith("(unconfirmed)") else must).add(line)
    return must, must_not


def field_run() -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    point = Point(34.0, -118.0, None, None, None, "fixed point", "h-e", time.time())
    for scenario in scenarios():
        with tempfile.TemporaryDirectory() as tmp, CardPipeline(Path(tmp)) as pipeline:
            pipeline.run(scenario)
            cards = pipeline.projector.cards()
        sent = fields(CardSet(cards=[sendable(card).card for card in cards.cards]))
        xml = to_xml(casevac(cards, 1, "bench"), point, time.time(), 600).decode().lower()
        must, must_not = carried(expected_fields(scenario.expected))
        found, invented = must & sent, sent - must
        in_xml = sum(1 for line in sent if _value(line) in xml)
        t = totals[scenario.set]
        for key, value in (("expected", len(must)), ("carried", len(found)), ("sent", len(sent)),
                           ("invented", len(invented)), ("doubted_sent", len(must_not & sent)),
                           ("values_in_xml", in_xml)):
            t[key] += value
        print(f"{scenario.set:8} {scenario.name:36} carried {len(found)}/{len(must)}, not expected {len(invented)}"
              f"{': ' + '; '.join(sorted(invented)) if invented else ''}; missed "
              f"{'; '.join(sorted(must - sent)) or 'none'}")
    return {name: {**t, "recall": t["carried"] / max(1, t["expected"]),
                   "precision": t["carried"] / max(1, t["sent"])} for name, t in totals.items()}


def _value(line: str) -> str:
    value = line.split(" = ", 1)[1].removesuffix(" (unconfirmed)").lower()
    return {"a": "alert", "v": "voice", "p": "pain", "u": "unresponsive", "yes": ""}.get(value, value)


def time_run(trials: int) -> dict[str, list[float]]:
    from tcccd.wire.tak import CardSendReply
    from tests.card.test_card_daemon import say
    from tests.support import takserver
    from tests.support.daemon import DaemonProcess, make_config
    from tests.support.tak_peers import TakClient
    from tests.tak.test_tak_daemon import BLAST, ROUTES, STAGES, card_events

    why = takserver.available()
    if why is not None:
        print(f"time: skipped, {why}")
        return {}
    tmp = Path(tempfile.mkdtemp())
    server = takserver.FreeTakServer(tmp).start()
    team, reference = TakClient(server.cot_port, "team-1", "TEAM-1"), TakClient(server.cot_port, "ref-1", "REF-1")
    daemon = DaemonProcess(tmp, make_config(tmp, STAGES, ROUTES, top={"tak": {
        "enabled": True, "url": f"tcp://127.0.0.1:{server.cot_port}", "kit_uid": "bench-kit",
        "gpsd": {"enabled": False}, "fixed_point": {"lat": 34.0, "lon": -118.0}, "confirm_window_s": 10.0}}))
    samples: dict[str, list[float]] = defaultdict(list)
    try:
        daemon.wait_healthy()
        daemon.wait_for(lambda r: r["tak"]["connected"])
        say(daemon, *BLAST)
        card_events(daemon, 12)
        for trial in range(trials):
            count = len(team.received(KIT))
            start = time.perf_counter()
            reference.send(_reference_event(trial))
            team.wait_for(f"ref-{trial}".encode())
            samples["reference (pytak -> server -> team)"].append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            with daemon.client() as client:
                CardSendReply.from_message(client.call("card.send"))
            team.wait_for(KIT, count + 1)
            samples["card.send -> team"].append((time.perf_counter() - start) * 1000)
            say(daemon, "Send nine line.")
            daemon.wait_for(lambda r: r["tak"]["awaiting_confirmation"])
            start = time.perf_counter()
            say(daemon, "Send.")
            team.wait_for(KIT, count + 2)
            samples["spoken 'Send.' -> team"].append((time.perf_counter() - start) * 1000)
    finally:
        daemon.stop()
        team.close()
        reference.close()
        server.stop()
    for name, values in samples.items():
        p50, p99 = percentiles(values)
        print(f"time {name:38} p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  (n={len(values)})")
    return dict(samples)


def _reference_event(trial: int) -> bytes:
    import pytak

    now, stale = pytak.cot_time(), pytak.cot_time(600)
    return (f'<event version="2.0" uid="ref-{trial}" type="b-r-f-h-c" how="h-e" time="{now}" start="{now}" '
            f'stale="{stale}"><point lat="1" lon="2" hae="9999999.0" ce="9999999.0" le="9999999.0"/><detail>'
            f'<contact callsign="REF"/><_medevac_ title="REF" urgent="1"/></detail></event>').encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = {"fields": field_run()}
    for name, t in result["fields"].items():
        print(f"fields {name:8} recall {t['recall']:.1%}  precision {t['precision']:.1%}  doubted sent "
              f"{int(t['doubted_sent'])}  values found in the XML {int(t['values_in_xml'])}/{int(t['sent'])}")
    result["time_ms"] = time_run(args.trials)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
