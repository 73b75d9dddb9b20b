"""When the capture stage calls itself degraded, and which rate it opens next (the part that needs no device)."""

from __future__ import annotations

from tcccd.plugins.capture.stream_watch import RateChoice, StreamWatch


def test_a_stream_that_keeps_stopping_is_degraded_until_it_holds_for_the_window() -> None:
    watch = StreamWatch(None, window_s=60, reopens_to_degrade=2)
    watch.opened(48000, 0.0)
    watch.lost("the audio stream stopped", 20.0)
    watch.reopened(20.0)
    assert watch.degraded_reason(21.0, None, 0.02) is None  # one xrun recovered is not a deaf microphone
    watch.lost("no audio from 'default' for 2.1 s", 30.0)
    watch.reopened(30.0)
    reason = watch.degraded_reason(31.0, None, 0.02)
    assert reason and "reopened 2 times in the last 60 s" in reason and "no audio from 'default'" in reason
    assert watch.degraded_reason(79.0, None, 0.02) is not None
    assert watch.degraded_reason(81.0, None, 0.02) is None  # it held for a minute since


def test_no_device_and_a_silent_open_stream_are_degraded() -> None:
    watch = StreamWatch(None, silent_s=1.0)
    assert watch.degraded_reason(0.0, "no audio device named 'default'", None) == \
        "no microphone: no audio device named 'default'"
    assert watch.degraded_reason(0.0, None, 0.9) is None
    assert watch.degraded_reason(0.0, None, 1.2) == "the microphone's stream delivered no audio for 1.2 s"
    assert watch.degraded_reason(0.0, None, None) is None  # not delivering yet: the device's start grace


def test_the_rate_comes_from_the_config_then_the_server_then_the_device() -> None:
    assert StreamWatch(44100).choose_rate(48000) == RateChoice(44100, "config")
    assert StreamWatch(None).choose_rate(48000) == RateChoice(48000, "sound server")
    assert StreamWatch(None).choose_rate(None) == RateChoice(None, "device default")


def test_two_stalls_right_after_opening_switch_to_the_other_common_rate() -> None:
    watch = StreamWatch(None, young_s=10, stalls_to_switch=2)
    watch.opened(44100, 0.0)
    watch.lost("the audio stream stopped", 3.0)
    assert watch.choose_rate(None) == RateChoice(None, "device default")
    watch.opened(44100, 3.0)
    watch.lost("the audio stream stopped", 5.0)
    switched = watch.choose_rate(None)
    assert switched.rate_hz == 48000 and "stopped 2 times within 10 s of opening at 44100 Hz" in switched.source
    assert watch.choose_rate(44100).rate_hz == 48000  # it sticks, even over what a server says


def test_a_stream_that_held_a_while_resets_the_count_and_a_pinned_rate_never_switches() -> None:
    watch = StreamWatch(None, young_s=10, stalls_to_switch=2)
    watch.opened(48000, 0.0)
    watch.lost("x", 3.0)
    watch.opened(48000, 3.0)
    watch.lost("x", 60.0)  # it held for nearly a minute: not the rate's fault
    assert watch.choose_rate(48000) == RateChoice(48000, "sound server")
    pinned = StreamWatch(48000, young_s=10, stalls_to_switch=1)
    pinned.opened(48000, 0.0)
    pinned.lost("x", 1.0)
    assert pinned.choose_rate(None) == RateChoice(48000, "config")
