"""Asking the sound server (PulseAudio, or PipeWire through pipewire-pulse) what it runs, before PortAudio opens.

ALSA's `default` and `pulse` devices go through PulseAudio's ALSA plugin, which accepts any rate and lets the
server resample; PortAudio then reports 44.1 kHz for them whatever the server runs. A duplex stream at 44.1 kHz
into a 48 kHz server (PipeWire's default, the only rate of many USB headsets) stalls and is reopened again and
again, hearing nothing; at the server's own rate it holds. So the stage asks the server for its default
source's rate (libpulse through `pulsectl`) and opens the stream at that.

The same question tells a frozen server from an absent one: PortAudio's open against a server that accepts the
connection and never answers blocks the stage for a minute (measured: 60 s per try), so a server that does
not answer in `timeout_s` is reported as such and PortAudio is not asked. Where no server listens (a plain
ALSA kit) or libpulse is not installed, the answer is "no server" and PortAudio's own default stands.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

SERVER_DEVICES = ("default", "pulse", "pipewire")  # ALSA devices that a running sound server takes over
SLICE_S = 0.1  # pulsectl's connect(timeout) waits its whole timeout even once connected: ask in slices


@dataclass(frozen=True)
class ServerAnswer:
    """What the server said: its default source and rate; or that none listens; or that it does not answer."""

    listening: bool
    frozen: bool = False
    rate_hz: int | None = None
    source: str | None = None
    reason: str = ""


def routes_to_server(device: str) -> bool:
    """Whether ALSA hands this PortAudio device to a sound server (when one runs)."""
    return device in SERVER_DEVICES


def ask(timeout_s: float = 1.0) -> ServerAnswer:
    """The running server's default source and its rate; bounded by `timeout_s` however the server behaves."""
    try:
        import pulsectl
    except (ImportError, OSError) as exc:  # no pulsectl, or no libpulse.so.0 under it
        return ServerAnswer(False, reason=f"libpulse not available ({exc})")
    deadline = time.monotonic() + timeout_s
    with pulsectl.Pulse("tcccd-capture", connect=False) as pulse:
        accepted = False  # a try that waited: something listens (a frozen server's backlog then fills and refuses)
        while True:
            tried_at = time.monotonic()
            try:
                pulse.connect(timeout=SLICE_S)
                break
            except pulsectl.PulseError as exc:
                accepted = accepted or time.monotonic() - tried_at >= SLICE_S / 2
                if not accepted:  # refused at once (pulsectl says "timed out" all the same)
                    return ServerAnswer(False, reason=f"no sound server answers ({exc})")
                if time.monotonic() >= deadline:
                    return ServerAnswer(False, frozen=True, reason=f"the sound server accepts connections but does "
                                                                   f"not answer within {timeout_s:g} s")
        try:
            return _default_source(pulse)
        except pulsectl.PulseError as exc:  # it answered, then failed a query: say so, and let PortAudio decide
            return ServerAnswer(True, reason=f"the sound server answered but not about its sources ({exc})")


def _default_source(pulse: Any) -> ServerAnswer:
    """The default source, or where the server does not resolve it (pipewire-pulse without a session manager
    names it `@DEFAULT_SOURCE@`) its first real source, else its first monitor: one graph runs at one rate."""
    info = pulse.server_info()
    sources = pulse.source_list()
    named = [s for s in sources if s.name == info.default_source_name]
    real = [s for s in sources if not s.name.endswith(".monitor")]
    source = (named or real or sources or [None])[0]
    server = f"{info.server_name} {info.server_version}"
    if source is None:
        return ServerAnswer(True, reason=f"{server} has no source")
    return ServerAnswer(True, rate_hz=int(source.sample_spec.rate), source=source.name, reason=server)
