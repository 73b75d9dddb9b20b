"""`tcccd card`: the casualty cards from the running daemon, as text, JSON, FHIR or a printable PDF; and the review.

The daemon sends the cards (`card.get`); every export is made here, on the
operator's side, from the card received: `--pdf FILE` writes the file this
command names, on this machine, and nothing about it is sent to the daemon.
`tcccd card confirm EVENT` / `tcccd card reject EVENT` review one entry by the
event id the card shows next to it (`j12.3`); `tcccd card close` ends the
mission (its cards kept, read with `--mission N`). `tcccd card send` sends the
cards to the team's TAK network as one CASEVAC (docs/tak.md); the text view
ends with what was sent, when and to whom.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcccd.wire.card import CardSet
from tcccd.wire.card_replies import CardClosed, CardReviewed, CardsReply
from tcccd.wire.client import Client, RequestFailed
from tcccd.wire.tak import CardSendReply, CardSendsReply, SendRecord


def _cards(endpoint: str, casualty: int | None, mission: int | None) -> CardSet:
    ask = {k: v for k, v in (("casualty", casualty), ("mission", mission)) if v is not None}
    with Client(endpoint, timeout_s=10) as client:
        reply = client.call("card.get", ask)
    CardsReply.from_message(reply)
    return CardsReply.cards_of(reply)


def show(endpoint: str, args: argparse.Namespace) -> int:
    cards = _cards(endpoint, args.casualty, args.mission)
    if args.json:
        from tcccd.card.exports.json_card import card_json

        print(json.dumps(card_json(cards), indent=2))
    elif args.fhir:
        from tcccd.card.exports.fhir_bundle import bundle

        print(json.dumps(bundle(cards, time.localtime().tm_gmtoff // 60, time.time()), indent=2))
    elif args.pdf:
        from tcccd.card.exports.pdf_card import render

        if not cards.cards:
            print("tcccd card: no casualty has a card yet; no PDF written", file=sys.stderr)
            return 1
        path = render(cards, Path(args.pdf))
        print(f"{path}: {len(cards.cards)} card{'s' if len(cards.cards) != 1 else ''}")
    else:
        from tcccd.card.exports.lines import text_card

        print("\n".join(text_card(card) for card in cards.cards) if cards.cards else "no casualty has a card yet")
        print(sent_lines(endpoint, args.mission))
    return 0


def _when(ts: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts)) if ts is not None else "-"


def _sent(record: SendRecord) -> str:
    who = ", ".join(map(str, record.casualties))
    state = f"sent {_when(record.sent_ts)}" if record.state == "sent" else "QUEUED (not sent yet)"
    held = f"; {record.withheld} awaiting check not sent" if record.withheld else ""
    return (f"   {state} to {record.destination}: casualty {who} (uid {record.uid}), asked "
            f"{_when(record.requested_ts)} by {record.by} ({record.via}){held}: {record.summary}")


def sent_lines(endpoint: str, mission: int | None) -> str:
    """What was sent to TAK, from `card.sends` (a daemon without it: said so)."""
    try:
        with Client(endpoint, timeout_s=10) as client:
            reply = client.call("card.sends", {"mission": mission} if mission is not None else {})
    except RequestFailed as exc:
        return f"TAK  (not available: {exc})"
    sends = CardSendsReply.from_message(reply)
    return "\n".join([f"TAK  {sends.link}", *(map(_sent, sends.sends) if sends.sends else ["   nothing sent"])])


def send(endpoint: str, args: argparse.Namespace) -> int:
    ask: dict[str, Any] = {"by": args.by}
    if args.casualty is not None:
        ask["casualty"] = args.casualty
    with Client(endpoint, timeout_s=10) as client:
        reply = CardSendReply.from_message(client.call("card.send", ask))
    print(_sent(reply).strip())
    print(f"   marker at: {reply.position_source}; {reply.link}")
    return 0


def close(endpoint: str, args: argparse.Namespace) -> int:
    with Client(endpoint, timeout_s=10) as client:
        reply = CardClosed.from_message(client.call("card.close", {"by": args.by}))
    cards = len(reply.casualties)
    print(f"mission {reply.mission} closed by {reply.by}: {cards} card{'s' if cards != 1 else ''} kept "
          f"(tcccd card --mission {reply.mission}); the next casualty one starts a new card")
    return 0


def review(endpoint: str, args: argparse.Namespace) -> int:
    if not args.event:
        print(f"tcccd card {args.action}: name the event (its id on the card, e.g. j12.3)", file=sys.stderr)
        return 2
    with Client(endpoint, timeout_s=10) as client:
        reply = CardReviewed.from_message(client.call(f"card.{args.action}", {"event": args.event, "by": args.by}))
    verb = "confirmed" if reply.action == "confirm" else "rejected"
    print(f"{reply.event} {verb} on casualty {reply.casualty}'s card by {reply.by}")
    return 0


def _casualty(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 999:
        raise argparse.ArgumentTypeError(f"{text!r}: a casualty is a number from 1 to 999")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a mission is a number from 1")
    return int(text)


ACTIONS = {"show": show, "close": close, "send": send}


def register(sub: Any, command: Callable[..., argparse.ArgumentParser], endpoint: Callable[[Any], str]) -> None:
    c = command("card", "the casualty cards (DD 1380); `card confirm|reject EVENT` reviews one entry",
                lambda args: ACTIONS.get(args.action, review)(endpoint(args), args))
    c.add_argument("action", nargs="?", choices=["show", "confirm", "reject", "close", "send"], default="show",
                   help="close: the mission is over (its cards are kept; the next casualty one starts a new card); "
                        "send: the cards to the team's TAK network as one CASEVAC (9-line and ZMIST)")
    c.add_argument("event", nargs="?", help="confirm/reject: the event id shown on the card (e.g. j12.3)")
    c.add_argument("--casualty", type=_casualty, help="one casualty's card (default: every card)")
    c.add_argument("--mission", type=_positive, help="a closed mission's cards (1 = the first; default: the "
                   "current mission)")
    c.add_argument("--by", default="medic", help="confirm/reject/close/send: who does it (default: medic)")
    form = c.add_mutually_exclusive_group()
    form.add_argument("--text", action="store_true", help="the card as text, section by section (the default)")
    form.add_argument("--json", action="store_true", help="the cards as JSON (daemon/card/exports/card.schema.json)")
    form.add_argument("--fhir", action="store_true", help="an HL7 FHIR R4B Bundle (JSON)")
    form.add_argument("--pdf", metavar="FILE", help="a printable one-page card per casualty, written to FILE here")
