"""The kit's clock against the medic's watch: times said hours ahead of it mean a wrong clock or time zone.

The card reads every clock time the medic says against the kit's local clock,
and a time still ahead is a plan ("TXA second gram at 1100" said at 1000). A
kit whose clock or zone is wrong (left on UTC while the team keeps local time)
reads every time said as hours off: an act said as over ("applied at 0912")
still goes on the card, unconfirmed, but one said with no past-tense word ("TQ
left leg, 0912") is taken for a plan and left off it. The card stage reports
the acts of the first kind (`card.events` `clock_ahead`); past a watch's drift,
this part tells the operator, once per mission and per offset, and status shows
the latest, so that the kit's clock is set before more is read wrong.
"""

from __future__ import annotations

import time
from typing import Any

from tcccd.ports import AlertSink
from tcccd.wire.alerts import ClockMismatch
from tcccd.wire.card_stage import ClockAhead

ALERT_AHEAD_MIN = 30  # further ahead than a watch drifts from the kit's clock: the clock or its zone is wrong


class ClockWatch:
    """Acts said as over at times the kit's clock has not reached, for the operator."""

    def __init__(self, alerts: AlertSink) -> None:
        self.alerts = alerts
        self.latest: tuple[int, ClockAhead, float] | None = None  # mission, what was said, when (epoch s)
        self.told: list[tuple[int, int]] = []  # (mission, minutes ahead) alerted

    def saw(self, ahead: ClockAhead, mission: int, request_id: str) -> None:
        if ahead.ahead_min < ALERT_AHEAD_MIN:
            return
        self.latest = (mission, ahead, time.time())
        if any(m == mission and abs(a - ahead.ahead_min) < ALERT_AHEAD_MIN for m, a in self.told):
            return  # the same offset, told already this mission
        self.told.append((mission, ahead.ahead_min))
        hours, minutes = divmod(ahead.ahead_min, 60)
        self.alerts.alert(ClockMismatch(
            message=f"CLOCK: the medic said {ahead.said_hhmm} for an act said as done when the kit's clock read "
                    f"{ahead.clock_hhmm}, {hours} h {minutes:02d} min ahead of it: the kit's clock or time zone is "
                    "likely wrong (timedatectl). Until it is set, times said are read hours off: an act said "
                    "with a time but without 'gave' or 'applied' is taken for a plan and left off the card.",
            request_id=request_id, said_hhmm=ahead.said_hhmm, clock_hhmm=ahead.clock_hhmm,
            ahead_min=ahead.ahead_min), request_id)

    def report(self, mission: int) -> dict[str, Any]:
        """The latest such act of the mission under way, for status."""
        if self.latest is None or self.latest[0] != mission:
            return {}
        _, ahead, at = self.latest
        return {"clock_ahead_min": ahead.ahead_min, "clock_said_hhmm": ahead.said_hhmm,
                "clock_read_hhmm": ahead.clock_hhmm, "clock_ahead_at": at}
