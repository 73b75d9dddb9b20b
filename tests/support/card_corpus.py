"""The independent card corpus (tests/data/card/corpus) read and run through the real card stage.

Cases (`tune.yaml`, `heldout.yaml`): utterances as Whisper writes speech, each through Whisper's real writing steps
(vocabulary, numbers) into a final transcript, then the card stage, the card log and the projection, one case on
an empty card set with casualty one current. The everyday set: `everyday.yaml`'s sentences, the real-speech
references (tests/data/real-speech/refs.tsv) and the safety set (tests/data/asr/safety.txt), each a case of its
own whose card must stay empty.

A word the recogniser doubted is marked where it lies in the record's text: found in what was heard, then carried
through the rewrites (a word inside a rewritten number marks the whole written number, as Whisper's review does).
The held-out half is loaded like the others, by the bench only, and reported as aggregates there.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.card_fields import expected_fields, fields
from tests.support.card_scenarios import CardPipeline, Utterance, _audio_agrees, _reviewer

DATA = Path(__file__).resolve().parents[1] / "data"
CORPUS = DATA / "card" / "corpus"
DATE = "2026-11-26"
FIRST_AT = "10:00:00"


@dataclass
class Case:
    id: str
    klass: str
    utterances: list[Utterance]
    expected: set[str]

    def clock(self, utterance: Utterance) -> float:
        return float(calendar.timegm(time.strptime(f"{DATE} {utterance.at}", "%Y-%m-%d %H:%M:%S")))


def _clock_after(seconds: int) -> str:
    h, m, s = 10, seconds // 60, seconds % 60
    return f"{h + m // 60:02d}:{m % 60:02d}:{s:02d}"


def _utterances(raw: list[Any]) -> list[Utterance]:
    out = []
    for i, item in enumerate(raw):
        item = {"heard": item} if isinstance(item, str) else dict(item)
        out.append(Utterance(heard=item["heard"], at=item.get("at", _clock_after(10 * i)),
                             uncertain=list(item.get("uncertain", []))))
    return out


# the tune sets of twenty-nine writers: rules may change on them
TUNE_FILES = ("tune", "tune2", "tune3", "tune4", "tune5", "tune6", "tune7", "tune8", "tune9", "tune10", "tune11",
              "tune12", "tune13", "tune14", "tune15", "tune16", "tune17", "tune18", "tune19", "tune20",
              "tune21", "tune22", "tune23", "tune24", "tune25", "tune26", "tune27", "tune28", "tune29")
SET_OF_FILE = {**dict.fromkeys(TUNE_FILES, "tune"), "heldout": "heldout"}  # file -> the half it belongs to


def cases(file_name: str) -> list[Case]:
    """The cases of a tune set (`TUNE_FILES`) or of `heldout`."""
    raw = yaml.safe_load((CORPUS / f"{file_name}.yaml").read_text())
    assert raw["set"] == SET_OF_FILE[file_name] and raw["utc_offset_min"] == 0 and raw["date"] == DATE
    return [Case(c["id"], c["class"], _utterances(c["utterances"]), expected_fields(c["expected"] or ""))
            for c in raw["cases"]]


def everyday() -> list[Case]:
    """Sentences that must add nothing to any card: the everyday set, the real-speech references, the safety set."""
    raw = yaml.safe_load((CORPUS / "everyday.yaml").read_text())
    found = [Case(s["id"], f"everyday:{s['topic']}", _utterances([s["heard"]]), set()) for s in raw["sentences"]]
    for line in (DATA / "real-speech" / "refs.tsv").read_text().splitlines():
        if line.strip():
            ident, text = line.split("\t", 1)
            found.append(Case(f"real-{ident}", "real_speech", _utterances([text]), set()))
    safety = [line for line in (DATA / "asr" / "safety.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    found += [Case(f"safety-{i:02d}", "safety", _utterances([text]), set()) for i, text in enumerate(safety, 1)]
    return found


def _forward(pos: int, spans: list[tuple[int, int, int]], edge: str) -> int:
    """A position of a rewrite's input in its output; inside a rewritten span, that span's written start or end."""
    shift = 0
    for start, end, written_len in sorted(spans):
        if pos < start or (edge == "end" and pos == start):
            break
        if pos < end or (edge == "end" and pos == end):
            return start + shift + (0 if edge == "start" else written_len)
        shift += written_len - (end - start)
    return pos + shift


def segment(heard: str, uncertain: list[str]) -> dict[str, Any] | None:
    """One ASR segment as Whisper's review writes it (None: nothing said), doubted words marked in its text."""
    decided = _reviewer().decide(heard, _audio_agrees)
    if decided is None:
        return None
    vocabulary = [(c["start_char"], c["end_char"], len(c["term"])) for c in decided.corrections]
    numbers = [(n["start_char"], n["end_char"], len(n["written"])) for n in decided.numbers]
    marks = []
    for word in uncertain:
        at = decided.heard.find(word)
        if at < 0:
            raise ValueError(f"a doubted word is not in what was heard: {word!r}")
        start = _forward(_forward(at, vocabulary, "start"), numbers, "start")
        end = _forward(_forward(at + len(word), vocabulary, "end"), numbers, "end")
        marks.append({"text": decided.text[start:end], "start_char": start, "end_char": end, "probability": 0.3,
                      "alternative": None})
    return {"text": decided.text, "heard": decided.heard, "corrections": decided.corrections,
            "numbers": decided.numbers, "uncertain": marks, "start_s": 0.0, "end_s": 3.0, "avg_logprob": -0.3}


class CorpusRunner:
    """One card stage for many cases; each case gets a card log and projection of its own."""

    def __init__(self, tmp_dir: Path) -> None:
        self.tmp_dir = Path(tmp_dir)
        self.count = 0
        self._pipeline: CardPipeline | None = None

    def __enter__(self) -> CorpusRunner:
        self._pipeline = CardPipeline(self.tmp_dir / "stage").__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pipeline is not None:
            self._pipeline.__exit__(*exc)

    def card(self, case: Case) -> set[str]:
        """The fields of every card after the case's utterances, lower case."""
        from tcccd.card.log import CardLog
        from tcccd.card.projection import Projector

        assert self._pipeline is not None
        pipeline = self._pipeline
        self.count += 1
        pipeline.log.close()
        pipeline.log = CardLog.open(self.tmp_dir / f"case{self.count}.sqlite3")
        pipeline.projector, pipeline.casualty, pipeline.journal_seq, pipeline.carry = Projector(), 1, 0, {}
        for utterance in case.utterances:
            seg = segment(utterance.heard, utterance.uncertain)
            if seg is not None:
                pipeline.update(pipeline.request(seg, case.clock(utterance), 0))
        return fields(pipeline.projector.cards())


def run_all(runner: CorpusRunner, found: list[Case]) -> Iterator[tuple[Case, set[str]]]:
    for case in found:
        yield case, runner.card(case)
