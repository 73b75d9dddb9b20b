"""Reading each card entry back through the kit's speaker, without talking over the medic.

After events are logged the keeper hands them here; their words
(tcccd.card.readback_words) go out as a `speak` request with `play: true`
from the daemon's own client `internal:readback`, routed like anyone's
(`routes.speak.play`, normally `[piper, mic]`: Piper speaks, the capture stage
plays it, and its echo handling keeps the speaker out of the record). It waits
while the medic is talking: a partial microphone transcript means an utterance
is under way, so nothing is said until its final transcript (or two seconds
without a partial); read-backs that queue meanwhile are said together, one at a
time. On by default, per profile (`readback:` in profiles/*.yaml), for what the
medic said into the kit: only entries whose transcript came from the kit's own
microphone are read aloud (`card.readback_sources` in the config may add
`client` or `wyoming`); recordings sent as files and other clients' transcripts
go on the card silently, so they never fill the speaker and gate the microphone
while the medic talks. A kit with no
speaker (the capture stage on the route reports `no_device`) or no `speak.play`
route reads nothing back, asks Piper for nothing, and says so once in the log
(`readbacks_not_played`, `readback_last_error` in status).
"""

from __future__ import annotations

import collections
import itertools
import time
from collections.abc import Callable
from typing import Any

import structlog

from tcccd import config as cfg
from tcccd.card.readback_words import readback_text
from tcccd.core.clients import INTERNAL_CLIENT
from tcccd.wire.card_events import Event
from tcccd.wire.protocol import Message, new_id

READBACK_CLIENT = INTERNAL_CLIENT + b"readback"
QUIET_AFTER_PARTIAL_S = 2.0  # a partial this recent means the medic is still talking
READBACK_DEADLINE_S = 30.0
PLAY_ROUTE = "speak.play"


class ReadBack:
    def __init__(self, config: Callable[[], cfg.Config], profile: Callable[[], str],
                 submit: Callable[[bytes, Message], None], speaker_missing: Callable[[], str | None]) -> None:
        self.config = config
        self.profile = profile
        self.submit = submit
        self.speaker_missing = speaker_missing
        self.pending: list[str] = []
        self.pending_since = 0.0  # when the oldest waiting read-back's card update was made
        self.update_at = 0.0  # the same, for the read-back being played
        self.talking_until = 0.0
        self.in_flight: str | None = None
        self.first_audio_pending = False
        self.first_audio_ms: collections.deque[float] = collections.deque(maxlen=256)
        self.counters = {"readbacks": 0, "readback_errors": 0, "readbacks_not_played": 0}
        self.last_error: str | None = None
        self.log = structlog.get_logger()
        self._settings: dict[tuple[int, str], bool] = {}
        self._ids = itertools.count(1)
        self._token = new_id()[:8]

    def enabled(self) -> bool:
        """The profile that runs reads back, and something plays speech (routes.speak.play)."""
        config, name = self.config(), self.profile()
        key = (id(config), name)
        if key not in self._settings:
            try:
                self._settings[key] = cfg.load_profile(config, name).readback
            except cfg.ConfigError:
                self._settings[key] = False
        return self._settings[key] and PLAY_ROUTE in config.routes

    def heard(self, source: str, partial: bool) -> None:
        """The microphone's transcripts say when the medic talks: a partial, still talking; a final, paused."""
        if source != "mic":
            return
        self.talking_until = time.monotonic() + QUIET_AFTER_PARTIAL_S if partial else 0.0

    def say(self, events: list[Event]) -> None:
        """Read back the events just logged from the sources read back, as soon as the medic is not talking."""
        sources = self.config().card.readback_sources
        text = readback_text([e for e in events if e.transcript.source in sources])
        if not text or not self.enabled():
            return
        missing = self.speaker_missing()
        if missing is not None:  # Piper's work would be thrown away, and every try would be an error
            self.counters["readbacks_not_played"] += 1
            if missing != self.last_error:
                self.log.warning("card read-back not played", reason=missing)
            self.last_error = missing
            return
        now = time.monotonic()
        if not self.pending:
            self.pending_since = now
        self.pending.append(text)
        self.flush(now)

    def flush(self, now: float) -> None:
        if not self.pending or self.in_flight is not None or now < self.talking_until:
            return
        text, self.pending, self.update_at = " ".join(self.pending), [], self.pending_since
        message = Message("speak", id=f"readback.{self._token}.{next(self._ids)}", final=True,
                          deadline_s=READBACK_DEADLINE_S, data={"text": text, "play": True})
        self.in_flight, self.first_audio_pending = message.id, True
        self.counters["readbacks"] += 1
        self.submit(READBACK_CLIENT, message)

    def on_reply(self, message: Message) -> None:
        if message.id != self.in_flight:
            return
        now = time.monotonic()
        if message.type == "audio" and message.payload and self.first_audio_pending:
            self.first_audio_pending = False
            self.first_audio_ms.append((now - self.update_at) * 1000)
            self.log.info("card read back", first_audio_ms=round(self.first_audio_ms[-1], 1))
        if not message.final:
            return
        self.in_flight = None
        if message.type == "error":
            self.counters["readback_errors"] += 1
            text = str(message.data.get("message"))
            if text != self.last_error:
                self.log.warning("card read-back not played", code=message.data.get("code"), reason=text)
            self.last_error = text
        self.flush(now)

    def report(self) -> dict[str, Any]:
        return {**self.counters, "readback_waiting": len(self.pending), "readback_last_error": self.last_error}


def speaker_missing(config: cfg.Config, stages: dict[str, Any]) -> str | None:
    """Why the read-back's route cannot sound now: a capture stage on it reports no audio device (its health)."""
    for name in config.routes.get(PLAY_ROUTE, []):
        health = getattr(stages.get(name), "health", None) or {}
        if health.get("capture") == "no_device":
            return f"no speaker: {health.get('no_device_reason') or 'the audio device is missing'}"
    return None
