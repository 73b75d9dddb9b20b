"""The daemon's TAK side: `card.send`, `card.sends`, the spoken command, the link, and its status line.

Runs on the daemon's thread; the network runs on the link's (tcccd.tak.link).
A confirmed CASEVAC is built from the current mission's cards
(tcccd.tak.casevac, tcccd.tak.cot) at the position known now
(tcccd.tak.positions), appended to the send log (tcccd.tak.outbox), then
handed to the link; what the link reports (sent, positions, gpsd's state) is
read back here every tick, so only this thread writes the log. At start, and
whenever `tak:` changes on a reload, the link is (re)started and every send
still pending in the log is handed to it again, in order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from tcccd.ports import ConfigSource
from tcccd.tak.casevac import Casevac, casevac
from tcccd.tak.commands import SpokenCommands, readback
from tcccd.tak.cot import Point, to_xml
from tcccd.tak.link import GpsdState, Heard, Outgoing, Sent, TakLink
from tcccd.tak.outbox import Outbox, Send
from tcccd.tak.ports import CardDesk, Refusal, Speaker
from tcccd.tak.positions import PositionBook
from tcccd.tak.voice import VoiceConfirm
from tcccd.tak_settings import TakSettings


@dataclass(frozen=True)
class Prepared:
    request: Casevac
    point: Point
    cot: bytes
    what: str


class TakService:
    def __init__(self, config: ConfigSource, desk: CardDesk, speaker: Speaker) -> None:
        self.config = config
        self.desk = desk
        self.speaker = speaker
        self.commands = SpokenCommands()
        self.voice = VoiceConfirm(self, speaker)
        self.settings: TakSettings | None = None
        self.positions = PositionBook(TakSettings())
        self.link: TakLink | None = None
        self.link_problem: str | None = None
        self.outbox: Outbox | None = None
        self._outbox_path: Path | None = None
        self.log = structlog.get_logger()

    # -- what the medic asks ------------------------------------------------------------------------------------

    def prepare(self, casualty: int | None, what: str = "nine line") -> Prepared | Refusal:
        """The CASEVAC as it would leave now, or why nothing can be sent."""
        s = self.config.current().tak
        if not s.enabled:
            return Refusal("tak_off", "TAK is off (tak.enabled is false in the config)")
        if self.desk.journal_path() is None:
            return Refusal("no_route", "there is no card log (the transcript journal is disabled)")
        mission, cards = self.desk.cards()
        try:
            request = casevac(cards, mission, s.kit_uid, casualty, s.confirmed_only)
        except ValueError as exc:
            return Refusal("unknown_casualty", str(exc))
        now = time.time()
        point = self.positions.best(now)
        if point is None:
            return Refusal("no_position", self.positions.why(now))
        return Prepared(request, point, to_xml(request, point, now, s.stale_s), what)

    def words(self, prepared: Prepared) -> str:
        return readback(prepared.request, prepared.what)

    def window_s(self) -> float:
        return self.config.current().tak.confirm_window_s

    def commit(self, prepared: Prepared, by: str, via: str) -> str:
        send = self.log_send(prepared, by, via)
        if isinstance(send, str):
            return f"Not sent: {send}."
        return "Sent to TAK." if self.connected() else "Queued for TAK: not connected yet, it goes when it is back."

    def log_send(self, prepared: Prepared, by: str, via: str) -> Send | str:
        """On disk in the send log, then handed to the link."""
        outbox = self.outbox_now()
        if outbox is None:
            return "there is no card log (the transcript journal is disabled)"
        r, url = prepared.request, self.config.current().tak.url
        send = outbox.append(Send(0, r.uid, r.mission, r.casualties, url, time.time(), by, via, r.withheld,
                                  readback(r, prepared.what), prepared.cot))
        self.log.info("CASEVAC logged for TAK", seq=send.seq, uid=send.uid, casualties=list(send.casualties),
                      via=via, by=by, withheld=send.withheld, position=prepared.point.source)
        if self.link is not None:
            self.link.send(Outgoing(send.seq, send.cot))
        return send

    # -- the daemon's loop --------------------------------------------------------------------------------------

    def heard(self, source: str, partial: bool, journal_seq: int | None) -> None:
        """A transcript was journalled: the spoken command, when it is one."""
        if partial or journal_seq is None:
            return
        said = self.desk.transcript(journal_seq)
        if said is not None:
            self.voice.heard(said[0], said[1], time.monotonic())

    def tick(self, now: float) -> None:
        self._follow_config()
        self.read_link()
        for speech_id in self.speaker.finished():
            self.voice.spoken(speech_id, now)
        self.voice.tick(now)

    def _follow_config(self) -> None:
        s = self.config.current().tak
        if s == self.settings:
            return
        self._stop_link()
        self.settings, self.positions, self.link_problem = s, PositionBook(s), None
        if not s.enabled:
            return
        password = None
        if s.tls.password_file is not None:
            try:
                password = s.tls.password_file.read_text().strip()
            except OSError as exc:
                self.link_problem = f"cannot read tak.tls.password_file: {exc.strerror}"
                self.log.error("TAK link not started", reason=self.link_problem)
                return
        self.link = TakLink(s, password)
        self.link.start()
        outbox = self.outbox_now()
        for send in outbox.pending() if outbox is not None else []:
            self.link.send(Outgoing(send.seq, send.cot))

    def read_link(self) -> None:
        if self.link is None:
            return
        for report in self.link.drain():
            if isinstance(report, Sent):
                outbox = self.outbox_now()
                if outbox is not None and outbox.mark_sent(report.seq, report.ts, report.destination):
                    self.log.info("CASEVAC sent to TAK", seq=report.seq, destination=report.destination)
            elif isinstance(report, Heard):
                self.positions.heard(report.point)
            elif isinstance(report, GpsdState):
                self.positions.gpsd_problem(report.problem)

    def _stop_link(self) -> None:
        if self.link is not None:
            self.link.stop()
            self.read_link()  # what it sent before it stopped is marked, so it is not sent again
            self.link = None

    def outbox_now(self) -> Outbox | None:
        path = self.desk.journal_path()
        if self.outbox is not None and path != self._outbox_path:
            self.outbox.close()
            self.outbox = None
        if path is not None and self.outbox is None:
            self.outbox, self._outbox_path = Outbox.open(path), path
        return self.outbox

    def close(self) -> None:
        self._stop_link()
        if self.outbox is not None:
            self.outbox.close()
            self.outbox = None

    # -- status -------------------------------------------------------------------------------------------------

    def connected(self) -> bool:
        return self.link is not None and bool(self.link.status()["connected"])

    def line(self) -> str:
        s = self.config.current().tak
        if not s.enabled:
            return "tak: off (tak.enabled: false)"
        outbox = self.outbox_now()
        queued = len(outbox.pending()) if outbox is not None else 0
        if self.link is None:
            return f"tak: not connected to {s.url} ({self.link_problem or 'not started'}); {queued} queued"
        state = self.link.status()
        if state["connected"]:
            since = time.strftime("%H:%M:%S", time.localtime(state["since"]))
            return f"tak: connected to {s.url} since {since}; {queued} queued"
        retry = f"; retry in {max(0, round(state['retry_at'] - time.time()))} s" if state["retry_at"] else ""
        return f"tak: not connected to {s.url} ({state['error']}){retry}; {queued} queued"

    def report(self) -> dict[str, Any]:
        s = self.config.current().tak
        outbox = self.outbox_now()
        sends = outbox.sends() if outbox is not None else []
        state = self.link.status() if self.link is not None else {"connected": False, "error": self.link_problem}
        return {"enabled": s.enabled, "destination": s.url or None, "connected": bool(state["connected"]),
                "line": self.line(), "error": state.get("error"),
                "queued": sum(1 for x in sends if x.sent_ts is None),
                "sent": sum(1 for x in sends if x.sent_ts is not None),
                **self.positions.report(time.time()), "awaiting_confirmation": self.voice.report()}
