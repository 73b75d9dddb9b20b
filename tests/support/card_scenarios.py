"""The card scenarios (tests/data/card/*.yaml) run as the daemon will run them: text through the card stage, the
events appended to the card log, the cards projected.

Each utterance's `heard` goes through Whisper's real writing steps (vocabulary
correction, then numbers) to give the record's text and its audit trail, as a
final transcript carries them; the card stage runs in a PluginHarness (the same
Stage the worker uses); its events go to a CardLog on disk and a Projector.
The bench (bench/card.py) times the same path.
"""

from __future__ import annotations

import calendar
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tcccd.card.log import CardLog
from tcccd.card.projection import Projector
from tcccd.kit.testing import PluginHarness
from tcccd.wire.card_stage import EVENTS_TYPE, EXTRACT_TYPE, CardEvents
from tcccd.wire.protocol import Message

SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "card"
CARD_PLUGIN = "tcccd.plugins.card.plugin:CardPlugin"


@dataclass
class Utterance:
    at: str
    heard: str
    uncertain: list[str] = field(default_factory=list)


@dataclass
class Scenario:
    name: str
    set: str
    about: str
    date: str
    utc_offset_min: int
    utterances: list[Utterance]
    expected: str

    def clock(self, utterance: Utterance) -> float:
        """The utterance's clock time, epoch seconds (the scenario's date and time are in its UTC offset)."""
        local = calendar.timegm(time.strptime(f"{self.date} {utterance.at}", "%Y-%m-%d %H:%M:%S"))
        return float(local - self.utc_offset_min * 60)


def load(path: Path) -> Scenario:
    raw = yaml.safe_load(path.read_text())
    return Scenario(name=path.stem, set=raw["set"], about=raw["about"], date=raw["date"],
                    utc_offset_min=raw["utc_offset_min"], utterances=[Utterance(**u) for u in raw["utterances"]],
                    expected=raw["expected"])


def scenarios(which: str | None = None) -> list[Scenario]:
    found = [load(p) for p in sorted(SCENARIOS.glob("*.yaml"))]
    return [s for s in found if which is None or s.set == which]


@functools.cache
def _reviewer() -> Any:
    """Whisper's writing steps as the stage builds them (its common words from the embedded model's tokenizer), with
    no tokenizer for the review itself: a text has no audio to read a number again from."""
    from tcccd.plugins.whisper.engine.convert import embedded_model_dir
    from tcccd.plugins.whisper.engine.tokenizer import Tokenizer
    from tcccd.plugins.whisper.review.review import SegmentReviewer
    from tcccd.plugins.whisper.review.review_setup import OneTokenWords
    from tcccd.plugins.whisper.review.vocabulary import VocabularyCorrector

    common = OneTokenWords(Tokenizer(embedded_model_dir() / "tokenizer.json", multilingual=False))
    return SegmentReviewer(None, VocabularyCorrector.load(None, common_word=common), write_numbers=True)


def _audio_agrees(texts: list[str]) -> list[float]:
    """Stands in for the decoder's scores on audio a text scenario does not have: every reading scores alike, so
    each rewrite Whisper's review proposes is kept, as when the medic said the term (the audio scenarios run the
    real check)."""
    return [0.0] * len(texts)


def segment(heard: str, uncertain: list[str]) -> dict[str, Any]:
    """One ASR segment as Whisper's review writes it, with `uncertain` words marked where they are in the text."""
    written = _reviewer().decide(heard, _audio_agrees)
    marks = []
    for word in uncertain:
        at = written.text.find(word)
        assert at >= 0, f"uncertain word {word!r} is not in the written text {written.text!r}"
        marks.append({"text": word, "start_char": at, "end_char": at + len(word), "probability": 0.3,
                      "alternative": None})
    return {"text": written.text, "heard": written.heard, "corrections": written.corrections,
            "numbers": written.numbers, "uncertain": marks, "start_s": 0.0, "end_s": 3.0, "avg_logprob": -0.3}


def reply_events(reply: Message) -> CardEvents:
    """The stage's reply, from `data` or (a big one) its payload frame."""
    assert reply.type == EVENTS_TYPE, reply.data
    return CardEvents.model_validate_json(reply.payload) if reply.payload else CardEvents.model_validate(reply.data)


class CardPipeline:
    """Final transcript -> card stage -> card log -> projection, one utterance at a time."""

    def __init__(self, tmp_dir: Path) -> None:
        self.harness = PluginHarness(CARD_PLUGIN, {}, tmp_dir)
        self.log = CardLog.open(tmp_dir / "transcripts.sqlite3")
        self.projector = Projector()
        self.casualty = self.log.current_casualty()
        self.carry: dict[str, Any] = {}  # what the last transcript left for the next (a pending correction...)
        self.journal_seq = 0

    def __enter__(self) -> CardPipeline:
        self.harness.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.harness.__exit__(*exc)
        self.log.close()

    def request(self, seg: dict[str, Any], utterance_ts: float, utc_offset_min: int) -> Message:
        self.journal_seq += 1
        data = {"text": seg["text"], "segments": [seg], "journal_seq": self.journal_seq, "request_id": "scenario",
                "source": "client", "utterance_ts": utterance_ts, "utc_offset_min": utc_offset_min,
                "casualty": self.casualty, "carry": self.carry}
        return Message(EXTRACT_TYPE, data=data, final=True)

    def update(self, message: Message) -> CardEvents:
        """The card update for one final transcript: rules, log append, projection."""
        [reply] = self.harness.request(message)
        result = reply_events(reply)
        for event in self.log.append(result.events):
            self.projector.apply(event)
        self.casualty = result.casualty
        self.carry = result.carry.model_dump(mode="json")
        return result

    def run(self, scenario: Scenario) -> None:
        for utterance in scenario.utterances:
            seg = segment(utterance.heard, utterance.uncertain)
            self.update(self.request(seg, scenario.clock(utterance), scenario.utc_offset_min))
