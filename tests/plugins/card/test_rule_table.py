"""The rules' word gates change no finding: every rule run on every sentence finds what the gated table finds."""

from __future__ import annotations

from tcccd.plugins.card.context_rules import ContextRules
from tcccd.plugins.card.phrases import words
from tcccd.plugins.card.rule_table import RULES, findings
from tcccd.plugins.card.sentences import split
from tests.support.card_corpus import TUNE_FILES, cases, everyday, segment
from tests.support.card_scenarios import scenarios


def _texts() -> list[str]:
    tune = [case for name in TUNE_FILES for case in cases(name)]
    said = [u.heard for case in tune + everyday() for u in case.utterances]
    said += [u.heard for s in scenarios() for u in s.utterances]
    return [seg["text"] for heard in said if (seg := segment(heard, [])) is not None]


def test_a_gated_rule_finds_exactly_what_the_ungated_rule_finds() -> None:
    cue = ContextRules.load().corrections
    compared = 0
    for text in _texts():
        for s in split(text, cue):
            said = frozenset(w.text for w in words(s.lower, s.start, s.end))
            ungated = [f for rule, _ in RULES for f in rule(s)]
            assert findings(s, said) == ungated, s.words
            compared += len(ungated)
    assert compared > 500

