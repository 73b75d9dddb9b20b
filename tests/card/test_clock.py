"""The kit's clock against the medic's watch: an act said as done at a time hours ahead of the kit's clock is
told to the operator (an alert, once per mission and offset, and a status line), through a running daemon whose
clock reads 21:57 (`TZ`: a kit left on the wrong zone), every alert read from the events socket."""

from __future__ import annotations

import time

from tcccd.card.clock import ClockWatch
from tcccd.core.health import Alerts, RecentErrors
from tcccd.wire.card_stage import ClockAhead
from tests.card.test_card_daemon import ROUTES, STAGES, cards_now, say
from tests.card.test_keeper import Events
from tests.support.kit_clock import zone_reading


def alerts_of(subscription, quiet_s: float = 2.0) -> list[dict]:
    told = []
    while (event := subscription.next(quiet_s)) is not None:
        if event[0] == "alert":
            told.append(event[1].data)
    return told


def test_an_act_said_hours_ahead_of_the_clock_alerts_once_and_shows_in_status(start_daemon) -> None:
    daemon = start_daemon(STAGES, ROUTES, env={"TZ": zone_reading(21 * 60 + 57)})
    daemon.wait_healthy()
    with daemon.client() as client:
        subscription = client.subscribe(("alert",))
        time.sleep(0.5)  # the subscription joins
        say(daemon, "Tourniquet applied to the left leg at zero nine twelve.", "TXA given at zero nine fifteen.",
            "TQ right arm, zero nine twenty.")
        lines = cards_now(daemon, 2)
        told = alerts_of(subscription)
        subscription.close()
    assert "c1 b tourniquet[left leg].time = 0912 (unconfirmed)" in lines
    assert "c1 f medication[txa].time = 0915 (unconfirmed)" in lines
    assert not any("right arm" in line for line in lines)  # no word says it was done: read as a plan
    [clock] = [a for a in told if a["kind"] == "clock_mismatch"]  # the second act, same offset: not told again
    assert clock["clock_hhmm"] in ("2157", "2158") and "time zone" in clock["message"]  # the minute may turn
    assert (clock["said_hhmm"], clock["ahead_min"]) == ("0912", {"2157": 11 * 60 + 15, "2158": 11 * 60 + 14}[
        clock["clock_hhmm"]])
    screen = daemon.cli("status")
    assert "CLOCK" in screen.stdout and "the medic said 0915" in screen.stdout, screen.stdout
    assert "check the kit's clock and time zone" in screen.stdout


def test_a_watch_s_drift_is_not_told_and_each_mission_and_offset_is_told_once() -> None:
    events = Events()
    watch = ClockWatch(Alerts(events, RecentErrors()))
    watch.saw(ClockAhead(said_hhmm="1020", clock_hhmm="1000", ahead_min=20), 1, "r1")
    assert events.published == [] and watch.report(1) == {}
    watch.saw(ClockAhead(said_hhmm="1100", clock_hhmm="1000", ahead_min=60), 1, "r2")
    watch.saw(ClockAhead(said_hhmm="1105", clock_hhmm="1001", ahead_min=64), 1, "r3")
    watch.saw(ClockAhead(said_hhmm="1300", clock_hhmm="1002", ahead_min=178), 1, "r4")
    watch.saw(ClockAhead(said_hhmm="1100", clock_hhmm="1003", ahead_min=57), 2, "r5")
    told = [(m.data["said_hhmm"], m.data["ahead_min"]) for topic, m in events.published if topic == "alert"]
    assert told == [("1100", 60), ("1300", 178), ("1100", 57)]
    assert watch.report(2)["clock_said_hhmm"] == "1100" and watch.report(1) == {}  # the latest, for its mission
