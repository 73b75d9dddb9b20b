"""The casualty card through a running daemon: card.get, card.confirm, card.reject and the `card` topic, every
frame read from a raw socket; the card after kill -9, after a card worker killed mid-request, and for transcripts
journalled while the card stage was not there; `tcccd card`.

The ASR is stood in by tests.support.scribe (text through Whisper's real writing steps); everything after the
transcript is the daemon's own. The Piper/Whisper path end to end: tests/e2e/test_card_e2e.py.
"""

from __future__ import annotations

import json
import os
import signal
import time

from pypdf import PdfReader

from tcccd.wire.card_replies import CardsReply
from tcccd.wire.protocol import Message
from tests.support.card_fields import fields
from tests.support.rawclient import RawClient, header
from tests.support.scribe import SCRIBE

STAGES = [{"name": "asr", "plugin": SCRIBE}, {"name": "card", "plugin": "card"}]
ROUTES = {"transcribe": ["asr"], "card.extract": ["card"]}
SAID = ("Casualty one. Gunshot wound to the left thigh.", "Tourniquet applied to the left leg at zero nine twelve.",
        "Pulse one twenty. Correction, pulse one ten.", "Casualty two. Burns to the chest.")


def say(daemon, *heard: str) -> list[int]:
    seqs = []
    with daemon.client() as client:
        for words in heard:
            [reply] = list(client.request(Message("transcribe", payload=words.encode(), final=True)))
            seqs.append(reply.data["journal_seq"])
    return seqs


def events_now(daemon) -> int:
    with daemon.client() as client:
        return client.call("card.get").data["events"]


def cards_now(daemon, count: int, timeout_s: float = 20.0) -> set[str]:
    """The card's fields once every journalled transcript went through the card stage and at least `count` events
    are in the log."""
    deadline = time.monotonic() + timeout_s
    while True:
        done = daemon.wait_for(lambda r: r["card"]["waiting"] == 0, timeout_s=timeout_s)["card"]["waiting"] == 0
        with daemon.client() as client:
            reply = client.call("card.get")
        if (done and reply.data["events"] >= count) or time.monotonic() > deadline:
            return fields(CardsReply.cards_of(reply))
        time.sleep(0.1)


def gone(pids: list[int], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while any(os.path.exists(f"/proc/{pid}") for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)


def ask(raw: RawClient, request_id: str, kind: str, **data) -> dict:
    raw.send(header(kind, request_id, final=True, data=data))
    raw.collect(until=lambda: raw.finals(request_id), quiet_s=0.3)
    assert len(raw.replies[request_id]) == 1, raw.replies[request_id]  # one reply, and it is the final one
    return raw.final(request_id)


def test_requests_topic_and_review_read_frame_by_frame(start_daemon):
    daemon = start_daemon(STAGES, ROUTES)
    daemon.wait_healthy()
    with daemon.client() as client:
        subscription = client.subscribe(("card",))
        time.sleep(0.5)
        say(daemon, *SAID)
        updates = []
        while (event := subscription.next(2.0)) is not None:
            updates.append(event[1])
        subscription.close()
    assert [(u.data["casualty"], u.data["journal_seq"], u.data["cause"]) for u in updates] == [
        (1, 1, "events"), (1, 2, "events"), (1, 3, "events"), (2, 4, "events")]
    assert updates[1].data["changed"] == ["j2.0"]
    [card] = CardsReply.cards_of(updates[1]).cards
    assert card.b_injury.tourniquets[0].event.words.text.startswith("Tourniquet")

    with RawClient(daemon.endpoint) as raw:
        every = ask(raw, "g1", "card.get")
        assert every["type"] == "cards" and every["data"]["casualties"] == [1, 2]
        assert every["data"]["media_type"] == "application/json"
        lines = fields(CardsReply.cards_of(Message.from_frames(raw.frames[-1])))
        assert "c1 c vitals[~" in " ".join(lines) and any(line.endswith("pulse = 110") for line in lines)
        assert not any(line.endswith("pulse = 120") for line in lines)  # corrected
        one = ask(raw, "g2", "card.get", casualty=2)
        assert one["data"]["casualties"] == [2]
        missing = ask(raw, "g3", "card.get", casualty=7)
        assert missing["type"] == "error" and missing["data"]["code"] == "unknown_casualty"
        assert missing["data"]["message"] == ("no card for casualty 7; casualties with a card: 1, 2 (leave casualty "
                                              "out for every card)")
        bad = ask(raw, "g4", "card.get", casualty=0)
        assert bad["data"]["code"] == "bad_message" and "data.casualty" in bad["data"]["message"]

        tq = card.b_injury.tourniquets[0].event.id
        confirmed = ask(raw, "c1", "card.confirm", event=tq, by="tablet-2")
        assert confirmed["type"] == "card.review" and confirmed["data"]["action"] == "confirm"
        assert confirmed["data"]["by"] == "tablet-2" and confirmed["data"]["casualty"] == 1
        [after] = CardsReply.cards_of(Message.from_frames(raw.frames[-1])).cards
        assert after.b_injury.tourniquets[0].status == "confirmed"
        pulse = next(c.pulse for c in after.c_vitals if c.pulse).event.id
        rejected = ask(raw, "r1", "card.reject", event=pulse)
        assert rejected["data"]["action"] == "reject" and rejected["data"]["by"] == "medic"
        [after] = CardsReply.cards_of(Message.from_frames(raw.frames[-1])).cards
        assert pulse in after.rejected
        assert [c.pulse.event.what.rate for c in after.c_vitals if c.pulse] == [120]  # the corrected value is back
        unknown = ask(raw, "r2", "card.reject", event="j99.9")
        assert unknown["data"]["code"] == "unknown_event"
        assert "event ids look like 'j12.3'" in unknown["data"]["message"]
        malformed = ask(raw, "r3", "card.confirm", event="tourniquet")
        assert malformed["data"]["code"] == "bad_message" and "data.event" in malformed["data"]["message"]

    shown = daemon.cli("card", "--casualty", "1")
    assert shown.returncode == 0 and "TQ left leg: CAT" not in shown.stdout and "TQ left leg" in shown.stdout
    assert json.loads(daemon.cli("card", "--json").stdout)["cards"][1]["casualty"] == 2
    bundle = json.loads(daemon.cli("card", "--fhir").stdout)
    assert bundle["resourceType"] == "Bundle"
    assert daemon.cli("card", "reject", "j1.1").stdout.strip() == "j1.1 rejected on casualty 1's card by medic"
    refused = daemon.cli("card", "confirm", "j42.0")
    assert refused.returncode == 1 and "no card event 'j42.0'" in refused.stderr


def test_the_pdf_is_written_where_the_operator_says_from_the_card_received(start_daemon, tmp_path):
    daemon = start_daemon(STAGES, ROUTES)
    daemon.wait_healthy()
    say(daemon, *SAID)
    cards_now(daemon, 6)
    out = tmp_path / "handover" / "cards.pdf"
    out.parent.mkdir()
    made = daemon.cli("card", "--pdf", str(out))
    assert made.returncode == 0, made.stderr
    pages = [page.extract_text() for page in PdfReader(out).pages]
    assert len(pages) == 2 and "0912" in pages[0]


def test_kill_9_loses_no_card_and_a_stage_that_was_missing_catches_up(start_daemon):
    daemon = start_daemon(STAGES, ROUTES)
    workers = [s["pid"] for s in daemon.wait_healthy()["stages"]]
    say(daemon, *SAID)
    before = cards_now(daemon, 6)
    logged = events_now(daemon)
    os.kill(daemon.proc.pid, signal.SIGKILL)
    daemon.proc.wait(10)
    gone(workers)  # they end within 1 s of their daemon (tcccd.worker.lifeline); the next one uses the same dirs

    without_card = start_daemon(STAGES[:1], {"transcribe": ["asr"]})
    without_card.wait_healthy()
    say(without_card, "Back to casualty one. One gram of TXA IV at zero nine fifteen.")
    with without_card.client() as client:
        assert fields(CardsReply.cards_of(client.call("card.get"))) == before  # served from the log, no stage
    without_card.stop()

    again = start_daemon(STAGES, ROUTES)
    again.wait_healthy()
    after = cards_now(again, logged + 2)  # the TXA and its casualty switch
    assert before < after and {"c1 f medication[txa] = 1 g", "c1 f medication[txa].time = 0915"} <= after


def test_a_card_worker_killed_while_it_holds_a_transcript_loses_nothing(start_daemon):
    daemon = start_daemon(STAGES, ROUTES)
    report = daemon.wait_healthy()
    card_pid = next(s["pid"] for s in report["stages"] if s["name"] == "card")
    os.kill(card_pid, signal.SIGSTOP)  # frozen: the transcript's extract waits in it
    say(daemon, SAID[1])
    time.sleep(0.5)
    os.kill(card_pid, signal.SIGKILL)
    lines = cards_now(daemon, 1, timeout_s=60)
    assert "c1 b tourniquet[left leg].time = 0912" in lines
    report = daemon.wait_for(lambda r: next(s for s in r["stages"] if s["name"] == "card")["pid"] != card_pid)
    assert next(s for s in report["stages"] if s["name"] == "card")["restarts"] >= 1
