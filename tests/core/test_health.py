"""The health watches: each talk-over a capture stage counts is one alert and one recent error; a stage that
reports itself degraded is one alert with its reason, and one when it recovers."""

from __future__ import annotations

from typing import Any

from tcccd.core.health import Alerts, DegradedWatch, RecentErrors, TalkOverWatch
from tcccd.wire.alerts import StageDegraded, StageRecovered, TalkOver
from tcccd.wire.replies import read_reply
from tcccd.wire.status import PluginHealth, read_plugin_health


class Stages:
    """What the workers last reported of their stages' health."""

    def __init__(self) -> None:
        self.health: dict[str, dict[str, Any]] = {"mic": {"plugin": "capture", "talk_overs": 0},
                                                   "asr": {"plugin": "whisper", "backend": "torch"}}

    def stage_health(self) -> dict[str, PluginHealth]:
        return {name: read_plugin_health(health) for name, health in self.health.items()}


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
    stages.health["mic"] = {"plugin": "capture", "talk_overs": 2}
    watch.tick(0.25)
    watch.tick(0.5)  # nothing new
    assert len(published) == 2 and len(recent.entries) == 2  # one alert per talk-over
    topic, message = published[0]
    alert = read_reply(message)
    assert topic == "alert" and isinstance(alert, TalkOver) and alert.worker == "mic"
    assert "first words may be missing" in alert.message and recent.entries[0]["message"] == alert.message
    stages.health["mic"] = {"plugin": "capture", "talk_overs": 0}  # the worker restarted
    watch.tick(0.75)
    stages.health["mic"] = {"plugin": "capture", "talk_overs": 1}
    watch.tick(1.0)
    assert len(published) == 3


def test_becoming_degraded_and_recovering_are_told_once_each():
    stages, events, recent = Stages(), Events(), RecentErrors()
    stages.health = {"mic": {"state": "ready", "capture": "listening"}, "asr": {}}
    watch = DegradedWatch(stages, Alerts(events, recent))
    watch.tick(0.0)
    assert events.published == [] and not recent.entries
    stages.health["mic"] = {"state": "degraded", "degraded_reason": "the microphone's stream delivered no audio "
                                                                     "for 1.1 s"}
    watch.tick(0.25)
    stages.health["mic"] = {"state": "degraded", "degraded_reason": "the microphone's stream delivered no audio "
                                                                     "for 1.4 s"}
    watch.tick(0.5)  # still degraded: not told again
    assert len(events.published) == 1 and len(recent.entries) == 1
    topic, message = events.published[0]
    alert = read_reply(message)
    assert topic == "alert" and isinstance(alert, StageDegraded) and alert.worker == "mic"
    assert alert.reason == "the microphone's stream delivered no audio for 1.1 s"
    assert recent.entries[0]["message"] == alert.message
    stages.health["mic"] = {"state": "ready"}
    watch.tick(0.75)
    recovered = read_reply(events.published[1][1])
    assert isinstance(recovered, StageRecovered) and "delivered no audio" in recovered.message
    assert len(recent.entries) == 1  # good news is published, not noted as an error


def test_a_degraded_state_without_a_reason_is_the_kits_own_and_not_told():
    stages, events = Stages(), Events()
    stages.health = {"asr": {"state": "degraded"}}
    DegradedWatch(stages, Alerts(events, RecentErrors())).tick(0.0)
    assert events.published == []
