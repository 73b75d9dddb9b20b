"""`card.send` and `card.sends`: the CASEVAC sent on a client's request (the CLI's `tcccd card send`), and the log.

A `card.send` is the medic's word given another way (typed, or a tablet's
button): no read-back, it is built, logged and handed to the link at once. The
reply comes once it is on disk: `state: sent` when the link had already written
it, else `queued`, with the link's status line. Refused, with nothing logged:
TAK off (`tak_off`), no card or no card for that casualty (`unknown_casualty`),
no position known (`no_position`, the reply says what each source lacks), no
journal (`no_route`).
"""

from __future__ import annotations

from tcccd.tak.outbox import Send
from tcccd.tak.ports import Refusal
from tcccd.tak.service import TakService
from tcccd.wire.messages import CardSend, CardSends
from tcccd.wire.protocol import Message
from tcccd.wire.tak import CardSendReply, CardSendsReply, SendRecord


def record(send: Send) -> dict[str, object]:
    return {"seq": send.seq, "uid": send.uid, "mission": send.mission, "casualties": list(send.casualties),
            "destination": send.destination, "requested_ts": send.requested_ts, "by": send.by, "via": send.via,
            "withheld": send.withheld, "summary": send.summary, "state": "queued" if send.sent_ts is None else "sent",
            "sent_ts": send.sent_ts}


def answer(tak: TakService, message: Message) -> Message:
    if message.type == "card.sends":
        ask = CardSends.model_validate(message.data)
        outbox = tak.outbox_now()
        sends = outbox.sends(ask.mission) if outbox is not None else []
        reply = CardSendsReply(sends=[SendRecord.model_validate(record(s)) for s in sends], link=tak.line())
        return reply.answer(message)
    ask = CardSend.model_validate(message.data)
    prepared = tak.prepare(ask.casualty)
    if isinstance(prepared, Refusal):
        return message.error(prepared.code, prepared.text)
    send = tak.log_send(prepared, ask.by, "request")
    if isinstance(send, str):
        return message.error("no_route", send)
    tak.read_link()  # a link that was quick has already written it
    outbox = tak.outbox_now()
    logged = next((s for s in outbox.sends(send.mission) if s.seq == send.seq), send) if outbox else send
    reply = CardSendReply.model_validate({**record(logged), "position_source": prepared.point.source,
                                          "link": tak.line()})
    return reply.answer(message)
