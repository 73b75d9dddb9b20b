"""Whether the microphone really hears, and at which rate it should be opened next: the capture stage's truth.

A stream that is open is not a microphone that hears. The stage is degraded, with the reason, when it has no
device, when an open stream delivers no audio for `silent_s`, or when the stream stopped and was reopened
`reopens_to_degrade` times within `window_s` (the 48 kHz stall: a stream that comes back only to stop again
hears next to nothing). The plugin reports it as `state: degraded` and `degraded_reason` in its health, which
the daemon turns into the stage's state, an alert and `tcccd status`'s exit code.

The rate: pinned in the config, else the sound server's own (tcccd.plugins.capture.sound_server), else
PortAudio's default for the device. A stream that stops within `young_s` of opening `stalls_to_switch` times
running is opened at the other common rate next, for a server that could not be asked.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

COMMON_RATES_HZ = (48000, 44100)


@dataclass(frozen=True)
class RateChoice:
    rate_hz: int | None  # None: PortAudio's default for the device
    source: str  # `config`, `sound server`, `device default`, or why it was switched


class StreamWatch:
    def __init__(self, pinned_rate_hz: int | None, silent_s: float = 1.0, window_s: float = 60.0,
                 reopens_to_degrade: int = 2, young_s: float = 10.0, stalls_to_switch: int = 2) -> None:
        self.pinned_rate_hz = pinned_rate_hz
        self.silent_s = silent_s
        self.window_s = window_s
        self.reopens_to_degrade = reopens_to_degrade
        self.young_s = young_s
        self.stalls_to_switch = stalls_to_switch
        self.reopened_at: collections.deque[float] = collections.deque()
        self.last_loss = ""
        self.opened_at: float | None = None
        self.rate_hz: int | None = None
        self.young_losses = 0
        self.switched: RateChoice | None = None

    def choose_rate(self, server_rate_hz: int | None) -> RateChoice:
        """The rate to open the device at next, and where it comes from (shown in status)."""
        if self.pinned_rate_hz:
            return RateChoice(self.pinned_rate_hz, "config")
        if self.switched:
            return self.switched
        if server_rate_hz:
            return RateChoice(server_rate_hz, "sound server")
        return RateChoice(None, "device default")

    def opened(self, rate_hz: int, now: float) -> None:
        self.opened_at, self.rate_hz = now, rate_hz

    def lost(self, reason: str, now: float) -> None:
        """The open stream stopped (before it is opened again, if it can be)."""
        self.last_loss = reason
        young = self.opened_at is not None and now - self.opened_at < self.young_s
        self.young_losses = self.young_losses + 1 if young else 0
        if young and self.young_losses >= self.stalls_to_switch and not self.pinned_rate_hz and self.rate_hz:
            other = next(r for r in COMMON_RATES_HZ if r != self.rate_hz) if self.rate_hz in COMMON_RATES_HZ \
                else COMMON_RATES_HZ[0]
            self.switched = RateChoice(other, f"switched: the stream stopped {self.young_losses} times within "
                                              f"{self.young_s:g} s of opening at {self.rate_hz} Hz")
            self.young_losses = 0

    def reopened(self, now: float) -> None:
        self.reopened_at.append(now)

    def recent_reopens(self, now: float) -> int:
        while self.reopened_at and now - self.reopened_at[0] > self.window_s:
            self.reopened_at.popleft()
        return len(self.reopened_at)

    def degraded_reason(self, now: float, no_device_reason: str | None, silent_for_s: float | None) -> str | None:
        """Why the microphone does not hear as it should, or None while it does.

        `silent_for_s`: seconds since the open stream last delivered audio (None: not open, or not delivering
        yet within its start grace)."""
        if no_device_reason is not None:
            return f"no microphone: {no_device_reason}"
        if silent_for_s is not None and silent_for_s >= self.silent_s:
            return f"the microphone's stream delivered no audio for {silent_for_s:.1f} s"
        reopens = self.recent_reopens(now)
        if reopens >= self.reopens_to_degrade:
            return (f"the audio stream stopped and was reopened {reopens} times in the last {self.window_s:g} s "
                    f"(last: {self.last_loss})")
        return None
