"""The degraded watch: a stage that reports itself degraded is one alert with its reason, and one when it recovers."""

from __future__ import annotations

from types import SimpleNamespace

from tcccd.core.degraded_watch import DegradedWatch
from tcccd.wire.replies import Alert


def test_becoming_degraded_and_recovering_are_told_once_each():
    stages = {"mic": SimpleNamespace(health={"state": "ready", "capture": "listening"}),
              "asr": SimpleNamespace(health={})}
    published, errors = [], []
    watch = DegradedWatch(lambda: stages, lambda topic, message: published.append((topic, message)),
                          lambda request_id, text: errors.append(text))
    watch.tick(0.0)
    assert published == [] and errors == []
    stages["mic"].health = {"state": "degraded", "degraded_reason": "the microphone's stream delivered no audio "
                                                                    "for 1.1 s"}
    watch.tick(0.25)
    stages["mic"].health = {"state": "degraded", "degraded_reason": "the microphone's stream delivered no audio "
                                                                    "for 1.4 s"}
    watch.tick(0.5)  # still degraded: not told again
    assert len(published) == 1 and len(errors) == 1
    topic, message = published[0]
    alert = Alert.from_message(message)
    assert topic == "alert" and alert.kind == "stage_degraded" and alert.worker == "mic"
    assert alert.reason == "the microphone's stream delivered no audio for 1.1 s" and errors[0] == alert.message
    stages["mic"].health = {"state": "ready"}
    watch.tick(0.75)
    recovered = Alert.from_message(published[1][1])
    assert recovered.kind == "stage_recovered" and "delivered no audio" in recovered.message and len(errors) == 1


def test_a_degraded_state_without_a_reason_is_the_kits_own_and_not_told():
    stages = {"asr": SimpleNamespace(health={"state": "degraded"})}
    published = []
    DegradedWatch(lambda: stages, lambda topic, message: published.append(message), lambda *_: None).tick(0.0)
    assert published == []
