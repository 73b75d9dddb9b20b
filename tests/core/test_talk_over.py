"""The talk-over watch: each talk-over a capture stage counts becomes one alert and one recent error."""

from __future__ import annotations

from types import SimpleNamespace

from tcccd.core.talk_over import TalkOverWatch
from tcccd.wire.replies import Alert


def test_each_new_talk_over_is_told_once_and_a_restarted_worker_counts_again():
    stages = {"mic": SimpleNamespace(health={"talk_overs": 0}), "asr": SimpleNamespace(health={"backend": "torch"})}
    published, errors = [], []
    watch = TalkOverWatch(lambda: stages, lambda topic, message: published.append((topic, message)),
                          lambda request_id, text: errors.append(text))
    watch.tick(0.0)
    assert published == [] and errors == []
    stages["mic"].health = {"talk_overs": 2}
    watch.tick(0.25)
    watch.tick(0.5)  # nothing new
    assert len(published) == 2 and len(errors) == 2  # one alert per talk-over
    topic, message = published[0]
    alert = Alert.from_message(message)
    assert topic == "alert" and alert.kind == "talk_over" and alert.worker == "mic"
    assert "first words may be missing" in alert.message and errors[0] == alert.message
    stages["mic"].health = {"talk_overs": 0}  # the worker restarted
    watch.tick(0.75)
    stages["mic"].health = {"talk_overs": 1}
    watch.tick(1.0)
    assert len(published) == 3
