"""card.close through a running daemon: the mission's cards are kept as they were, the next mission's start empty,
"casualty one" is a new card, and all of it survives a restart. Replies read frame by frame from a raw socket."""

from __future__ import annotations

import json

from tcccd.wire.card_replies import CardsReply
from tcccd.wire.protocol import Message
from tests.card.test_card_daemon import ROUTES, SAID, STAGES, ask, say
from tests.support.card_fields import fields
from tests.support.rawclient import RawClient


def caught_up(daemon, events: int) -> dict:
    return daemon.wait_for(lambda r: r["card"]["events"] >= events and r["card"]["waiting"] == 0)["card"]


def payload_cards(raw: RawClient) -> set[str]:
    return fields(CardsReply.cards_of(Message.from_frames(raw.frames[-1])))


def test_a_closed_mission_keeps_its_cards_and_the_next_one_starts_empty(start_daemon):
    daemon = start_daemon(STAGES, ROUTES)
    daemon.wait_healthy()
    say(daemon, *SAID)
    caught_up(daemon, 5)
    with daemon.client() as client:
        subscription = client.subscribe(("card",))
        with RawClient(daemon.endpoint) as raw:
            ask(raw, "g0", "card.get")
            before = payload_cards(raw)
            assert any("tourniquet" in line for line in before), before
            closed = ask(raw, "x1", "card.close", by="tablet-2")
            assert closed["type"] == "card.closed", closed
            assert (closed["data"]["mission"], closed["data"]["through_journal_seq"]) == (1, 4)
            assert closed["data"]["casualties"] == [1, 2] and closed["data"]["by"] == "tablet-2"
            assert payload_cards(raw) == before  # the closed mission's cards, as they were
            now = ask(raw, "g1", "card.get")
            assert now["data"]["casualties"] == []
            assert (now["data"]["mission"], now["data"]["current_mission"]) == (2, 2)
        update = subscription.next(5.0)
        subscription.close()
    assert update is not None and update[1].data["cause"] == "closed" and update[1].data["mission"] == 2

    say(daemon, "Burns to the chest.")  # no casualty named: casualty one of the new mission
    card = caught_up(daemon, 6)
    assert (card["mission"], card["casualty"], card["casualties"]) == (2, 1, [1])
    with RawClient(daemon.endpoint) as raw:
        ask(raw, "g2", "card.get")
        current = payload_cards(raw)
        assert any("burn" in line for line in current) and not any("tourniquet" in line for line in current), current
        assert ask(raw, "g3", "card.get", mission=1)["data"]["mission"] == 1 and payload_cards(raw) == before
        later = ask(raw, "g4", "card.get", mission=3)
        assert later["data"]["code"] == "unknown_mission" and "the current mission is 2" in later["data"]["message"]
        old = ask(raw, "r1", "card.reject", event="j2.0")
        assert old["data"]["code"] == "unknown_event" and "current mission's cards (mission 2" in old["data"]["message"]

    daemon.stop()
    again = start_daemon(STAGES, ROUTES)  # the same state directory: the cards come back from the log
    again.wait_healthy()
    assert (again.wait_healthy()["card"]["mission"], again.wait_healthy()["card"]["casualty"]) == (2, 1)
    with RawClient(again.endpoint) as raw:
        ask(raw, "g5", "card.get")
        assert payload_cards(raw) == current
    old_json = json.loads(again.cli("card", "--mission", "1", "--json").stdout)
    assert [c["casualty"] for c in old_json["cards"]] == [1, 2]
    shown = again.cli("card", "close")
    assert shown.returncode == 0 and shown.stdout.startswith("mission 2 closed by medic: 1 card kept"), shown
    assert again.wait_healthy()["card"]["mission"] == 3
