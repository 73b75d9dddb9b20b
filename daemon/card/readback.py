"""Reading each card entry back through the kit's speaker: what to say, and when, without talking over the medic.

What: a short spoken confirmation of what was just logged ("Tourniquet, left leg,
zero nine fifteen"), so a mis-heard entry is caught while the casualty is still in
front of the medic. Each event becomes a few words in the order said, built only
from the event's own fields (nothing the medic did not say is spoken either);
times are said as digit pairs ("zero nine fifteen"), because a speech synthesiser
reads "0915" as a number. An entry the card shows unconfirmed (an uncertain word,
a value out of range) is read back with "check", a correction with "corrected".
Negated findings and dictated notes are not read back: they go to the notes, in
the medic's own words, and reading them would only repeat them.

When: after events are logged the keeper hands them here; their words go out as
a `speak` request with `play: true` from the daemon's own client
`internal:readback`, routed like anyone's (`routes.speak.play`, normally
`[piper, mic]`: Piper speaks, the capture stage plays it, and its echo handling
keeps the speaker out of the record). It waits while the medic is talking: a
partial microphone transcript means an utterance is under way, so nothing is
said until its final transcript (or two seconds without a partial); read-backs
that queue meanwhile are said together, one at a time. On by default, per profile
(`readback:` in profiles/*.yaml), for what the medic said into the kit: only
entries whose transcript came from the kit's own microphone are read aloud
(`card.readback_sources` in the config may add `client` or `wyoming`);
recordings sent as files and other clients' transcripts go on the card
silently, so they never fill the speaker and gate the microphone while the
medic talks. A kit with no speaker (the capture stage on the
route reports `no_device`) or no `speak.play` route reads nothing back, asks
Piper for nothing, and says so once in the log (`readbacks_not_played`,
`readback_last_error` in status).
"""

from __future__ import annotations

import collections
import time
from typing import Any

import structlog

from tcccd import config as cfg
from tcccd.card.exports.lines import AVPU_WORDS, num
from tcccd.ports import ConfigSource, Requester, RunningProfile, StageHealth
from tcccd.wire.card_events import Event
from tcccd.wire.protocol import Message
from tcccd.wire.status import CaptureHealth

QUIET_AFTER_PARTIAL_S = 2.0  # a partial this recent means the medic is still talking
READBACK_DEADLINE_S = 30.0
PLAY_ROUTE = "speak.play"
ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS = ("", "", "twenty", "thirty", "forty", "fifty")
UNITS = {"g": "gram", "mg": "milligrams", "mcg": "micrograms", "mL": "milliliters", "L": "liters", "unit": "units"}
ROUTES = {"IV": "I V", "IO": "I O", "IM": "I M", "PO": "by mouth", "IN": "intranasal", "SL": "sublingual",
          "OTFC": "lozenge"}
NAMES = {"TXA": "T X A", "NPA": "N P A", "SGA": "S G A", "CRIC": "cric", "O2": "oxygen", "IV": "I V", "IO": "I O",
         "GSW": "gunshot wound", "IED": "I E D", "MVC": "vehicle crash", "RPG": "R P G", "HPMK": "hypothermia kit"}
MAX_EVENTS = 6  # a long dictation is read back by its first entries and a count: the medic keeps working


def spoken_time(hhmm: str) -> str:
    """'0915' -> 'zero nine fifteen', '1400' -> 'fourteen hundred', '0905' -> 'zero nine zero five'."""
    hours, minutes = int(hhmm[:2]), int(hhmm[2:])
    said_hours = f"zero {ONES[hours]}" if hours < 10 else _two_digits(hours)
    if minutes == 0:
        return f"{said_hours} hundred"
    return f"{said_hours} {'zero ' + ONES[minutes] if minutes < 10 else _two_digits(minutes)}"


def _two_digits(value: int) -> str:
    if value < 20:
        return ONES[value]
    tens, ones = divmod(value, 10)
    return TENS[tens] + (f" {ONES[ones]}" if ones else "")


def _name(value: Any) -> str:
    text = str(value)
    return NAMES.get(text, text)


def _dose(amount: float | None, unit: str | None) -> str:
    if amount is None:
        return ""
    word = UNITS.get(unit or "", unit or "")
    return f"{num(amount)} {word if amount != 1 else word.removesuffix('s')}".strip()


def _words(event: Event) -> list[str]:
    """The event's fields as words, in the order a medic says them; [] for what is not read back."""
    w, kind = event.what, event.kind
    simple = {
        "casualty": lambda: [f"Casualty {num(w.number)}"],
        "evacuation": lambda: [f"Evac {w.category}"],
        "mobility": lambda: [w.mobility],
        "battle_roster": lambda: ["Battle roster", " ".join(w.number or "")],
        "last_four": lambda: ["Last four", " ".join(w.digits or "")],
        "allergies": lambda: ["Allergies", "none known" if w.allergies == "NKA" else w.allergies],
        "mechanism": lambda: [_name(w.mechanism)],
        "injury": lambda: [w.injury, w.region],
        "burn_extent": lambda: [f"Burns {num(w.percent)} percent"],
        "tourniquet": lambda: ["Tourniquet", w.limb or w.category, w.device],
        "dressing": lambda: [f"{w.dressing or ''} dressing".strip().capitalize(), w.site],
        "airway": lambda: ["Airway", _name(w.airway)],
        "breathing": lambda: [_name(w.breathing), w.side],
        "access": lambda: [_name(w.access), w.site],
        "fluid": lambda: [w.product, _dose(w.volume, w.unit), ROUTES.get(w.route or "", w.route)],
        "medication": lambda: [_name(w.name), _dose(w.dose, w.unit), ROUTES.get(w.route or "", w.route)],
        "pulse": lambda: [f"Pulse {num(w.rate)}" if w.rate is not None else "Pulse", w.location],
        "bp": lambda: [f"B P {num(w.systolic)} over {num(w.diastolic)}" if w.diastolic is not None
                       else f"B P {num(w.systolic)}"],
        "rr": lambda: [f"Respirations {num(w.rate)}"],
        "spo2": lambda: [f"Sats {num(w.percent)} percent"],
        "avpu": lambda: [AVPU_WORDS.get(w.level or "", "")],
        "pain": lambda: [f"Pain {num(w.score)}"],
        "hypothermia": lambda: ["Hypothermia prevention"],
        "eye_shield": lambda: ["Eye shield", w.side],
        "splint": lambda: ["Splint", w.site],
        "pill_pack": lambda: ["Pill pack"],
        "responder": lambda: ["Responder", w.name],
    }
    build = simple.get(kind)
    return [] if build is None else [str(part) for part in build() if part not in (None, "")]


def readback_text(events: list[Event]) -> str:
    """What to say for the events just logged, '' when none is read back."""
    phrases = []
    for event in events:
        if event.negated or event.kind == "note":
            continue
        words = _words(event)
        if not words:
            continue
        if event.time.at_hhmm and event.kind != "casualty":
            words.append(spoken_time(event.time.at_hhmm))
        phrase = ", ".join(words)
        if event.correction:
            phrase = f"Corrected, {phrase}"
        if event.uncertain or event.out_of_range:
            phrase += ", check"
        phrases.append(phrase)
    if len(phrases) > MAX_EVENTS:
        phrases = [*phrases[:MAX_EVENTS], f"and {len(phrases) - MAX_EVENTS} more"]
    return ". ".join(phrases) + ("." if phrases else "")


class ReadBack:
    def __init__(self, config: ConfigSource, profile: RunningProfile, client: Requester,
                 stages: StageHealth) -> None:
        self.config = config
        self.profile = profile
        self.client = client
        self.stages = stages
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

    def enabled(self) -> bool:
        """The profile that runs reads back, and something plays speech (routes.speak.play)."""
        try:
            wanted = self.profile.settings().readback
        except cfg.ConfigError:  # the running profile's file broke since it was applied: say nothing
            return False
        return wanted and PLAY_ROUTE in self.config.current().routes

    def speaker_missing(self) -> str | None:
        """Why the read-back's route cannot sound now: a capture stage on it reports no audio device."""
        health = self.stages.stage_health()
        for name in self.config.current().routes.get(PLAY_ROUTE, []):
            stage = health.get(name)
            if isinstance(stage, CaptureHealth) and stage.capture == "no_device":
                return f"no speaker: {stage.no_device_reason or 'the audio device is missing'}"
        return None

    def heard(self, source: str, partial: bool) -> None:
        """The microphone's transcripts say when the medic talks: a partial, still talking; a final, paused."""
        if source != "mic":
            return
        self.talking_until = time.monotonic() + QUIET_AFTER_PARTIAL_S if partial else 0.0

    def say(self, events: list[Event]) -> None:
        """Read back the events just logged from the sources read back, as soon as the medic is not talking."""
        sources = self.config.current().card.readback_sources
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
        self.in_flight = self.client.submit("speak", {"text": text, "play": True}, deadline_s=READBACK_DEADLINE_S)
        self.first_audio_pending = True
        self.counters["readbacks"] += 1

    def tick(self, now: float) -> None:
        """From the main loop: the replies to what was said, then what waits for the medic to pause."""
        for reply in self.client.replies():
            self._on_reply(reply)
        self.flush(now)

    def _on_reply(self, message: Message) -> None:
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

    def report(self) -> dict[str, Any]:
        return {**self.counters, "readback_waiting": len(self.pending), "readback_last_error": self.last_error}

