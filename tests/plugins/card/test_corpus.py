"""The independent corpus through the real card stage: nothing invented on the everyday set, a floor on the tune half.

The corpus (tests/data/card/corpus) was written apart from the rules. The everyday sentences (with the real-speech
references and the safety set) must leave every card empty. The tune half may change rules; its floor is set below
what the rules reach, not at it (bench/card.py reports the figures, and the held-out half, which no test reads).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.card_corpus import CorpusRunner, cases, everyday
from tests.support.card_score import Score

TUNE_RECALL_FLOOR = 0.95
TUNE_PRECISION_FLOOR = 0.97


def _scored(found: list, tmp_path: Path) -> Score:
    score = Score()
    with CorpusRunner(tmp_path) as runner:
        for case in found:
            score.add(case.id, case.klass, runner.card(case), case.expected)
    return score


def test_the_everyday_set_puts_nothing_on_any_card(tmp_path: Path) -> None:
    score = _scored(everyday(), tmp_path)
    assert score.cases >= 290
    assert [(case_id, made_up + extra) for case_id, _, made_up, extra, _ in score.failures] == []


def test_the_tune_half_invents_nothing_and_finds_most_fields(tmp_path: Path) -> None:
    score = _scored(cases("tune"), tmp_path)
    assert score.cases == 304
    assert [(case_id, made_up) for case_id, _, made_up, _, _ in score.failures if made_up] == []
    assert score.all.recall() >= TUNE_RECALL_FLOOR and score.all.precision() >= TUNE_PRECISION_FLOOR, score.summary()
