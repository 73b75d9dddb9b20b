"""The talk-over watch: each talk-over a capture stage counts becomes one alert and one recent error."""

from __future__ import annotations

from typing import Any

from tcccd.core.health import Alerts, RecentErrors, TalkOverWatch
from tcccd.wire.alerts import TalkOver
from tcccd.wire.replies import read_reply


class Stages:
    """What the workers last reported of their stages' health."""

    def __init__(self) -> None:
        self.health: dict[str, dict[str, Any]] = {"mic": {"talk_overs": 0}, "asr": {"backend": "torch"}}

    def stage_health(self) -> dict[str, dict[str, Any]]:
        return self.health


class Events:
    def __init__(self) -> None:
        self.published: list[Any] = []

    def publish(self, topic: str, message: Any) -> None:
        self.published.append((topic, message))


def test_each_new_talk_over_is_told_once_and_a_restarted_worker_counts_again():
    stages, events, recent = Stages(), Events(), RecentErrors()
    published = events.published
    watch = TalkOverWatch(stages, Alerts(events, recent))
    watch.tick(0.0)
    assert published == [] and not recent.entries
    stages.health["mic"] = {"talk_overs": 2}
    watch.tick(0.25)
    watch.tick(0.5)  # nothing new
    assert len(published) == 2 and len(recent.entries) == 2  # one alert per talk-over
    topic, message = published[0]
    alert = read_reply(message)
    assert topic == "alert" and isinstance(alert, TalkOver) and alert.worker == "mic"
    assert "first words may be missing" in alert.message and recent.entries[0]["message"] == alert.message
    stages.health["mic"] = {"talk_overs": 0}  # the worker restarted
    watch.tick(0.75)
    stages.health["mic"] = {"talk_overs": 1}
    watch.tick(1.0)
    assert len(published) == 3
