"""The card's fast patterns change no match: a gated pattern finds what the pattern finds, a grouped alternation
matches what the flat one matches; the strings a pattern requires are in every match it makes."""

from __future__ import annotations

import random
import re

import pytest

from tcccd.plugins.card import clauses, context, lexicon
from tcccd.plugins.card.context_rules import ContextRules
from tcccd.plugins.card.fast_patterns import Gate, Gates, first_grouped, may_match_any, required
from tcccd.plugins.card.sentences import split
from tests.support.card_corpus import TUNE_FILES, cases, everyday, segment
from tests.support.card_scenarios import scenarios


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Every final transcript of the tuning corpus, the everyday set and the scenarios (minutes to write: once)."""
    tune = [case for name in TUNE_FILES for case in cases(name)]
    said = [u.heard for case in tune + everyday() for u in case.utterances]
    said += [u.heard for s in scenarios() for u in s.utterances]
    return [seg["text"] for heard in said if (seg := segment(heard, [])) is not None]


@pytest.mark.parametrize(("pattern", "strings"), [
    (r"\b(?:gave|given)\s+it\b", {"gave", "given"}),
    (r"\bwasn['’]t\b", {"wasn't", "wasn’t"}),
    (r"\b(?:was|were)\s+(?:actually\s+)?(?:casualty|patient)\b", {"casualty", "patient"}),  # the longer words
    (r"(?:(?<=\btq )|(?<=\bcat ))checks?\b", {"check", "checks"}),  # look-behinds take no characters
    (r"\bin\s+(?:five|ten)\s*$", {"five", "ten"}),
    (r"(?:\bis|'s|\bcame)\s+(?:off|out)\b", {"off", "out"}),
    (r"\b(?:took|cut)\s+(?:\w+\s+){0,4}?(?:off|out)\b", {"took", "cut"}),
    (r"\bx(?:yz)+", {"yz"}),  # a part said at least once: its own strings
])
def test_the_strings_a_pattern_requires_are_read_from_it(pattern: str, strings: set[str]) -> None:
    assert required(re.compile(pattern)) == strings


@pytest.mark.parametrize(("pattern", "strings"), [
    (r"\w+ing\b", {"ing"}),  # a class of many characters: only the letters said
    (r"(?:no|)\s*pulse?", {"puls", "pulse"}),  # an empty alternative: the rest
    (r"(a)\1", {"a"}),  # a group reference: only the group
    (r"(?i)gave", None),  # case-insensitive: "GAVE" holds no "gave"
    (r"(?i:gave)", None),
    (r"(?:abc)?", None),  # nothing said for certain
    (r"[^x]+", None),
])
def test_what_the_reading_does_not_know_requires_nothing(pattern: str, strings: set[str] | None) -> None:
    assert required(re.compile(pattern)) == strings


def _rule_patterns() -> list[re.Pattern[str]]:
    rules = ContextRules.load()
    return [rx for rx, _, _ in rules.patterned.patterns] + [rx for rx, _, _ in rules.pseudo_patterns.patterns] + \
        [rules.corrections.pattern, rules.acted, *(p for p in (rules.terminators,) if p is not None)]


def test_every_match_of_a_shipped_pattern_holds_a_string_it_requires(texts: list[str]) -> None:
    rng = random.Random(7)
    lower = [text.lower() for text in texts]
    vocabulary = sorted({w for text in lower for w in text.split()})
    lower += [" ".join(rng.choice(vocabulary) for _ in range(12)) for _ in range(2000)]  # words said out of place
    matched = 0
    for rx in _rule_patterns():
        strings = required(rx)
        if strings is None:
            continue
        for text in lower:
            for match in rx.finditer(text):
                assert any(s in match.group() for s in strings) or match.end() == match.start(), (rx.pattern, text)
                matched += 1
    assert matched > 1000


def test_a_gated_pattern_finds_exactly_what_the_pattern_finds(texts: list[str]) -> None:
    rules = ContextRules.load()
    compared = 0
    for text in texts:
        for s in split(text, rules.corrections):
            for gates in (rules.patterned, rules.pseudo_patterns):
                gated = [(m.span(), value) for m, value in gates.finditer(s.lower, s.start, s.end)]
                ungated = [(m.span(), value) for rx, value, _ in gates.patterns
                           for m in rx.finditer(s.lower, s.start, s.end)]
                assert gated == ungated, s.words
                compared += len(ungated)
            cue = rules.corrections
            assert [m.span() for m in cue.finditer(s.lower, s.start, s.end)] == \
                [m.span() for m in cue.pattern.finditer(s.lower, s.start, s.end)]
    assert compared > 500


def test_patterns_a_gate_cannot_read_are_always_tried() -> None:
    gate = Gate(re.compile(r"(?i)pulse"))
    assert gate.needs is None and [m.group() for m in gate.finditer("PULSE 110", 0, 9)] == ["PULSE"]
    gates = Gates([(re.compile(r"\bno\b"), "absent"), (re.compile(r"(?i)slowly"), "manner")])
    assert [(m.group(), v) for m, v in gates.finditer("slowly, no", 0, 10)] == [("no", "absent"), ("slowly", "manner")]
    assert [(m.group(), v) for m, v in gates.finditer("slowly, now", 0, 11)] == [("slowly", "manner")]
    assert [m.group() for m in Gate(re.compile(r"\bno\b")).finditer("no, not now", 3, 11)] == []


def test_a_sentence_passed_over_for_switches_holds_none(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    rules = ContextRules.load()
    sentences = [s for text in texts for s in split(text, rules.corrections)]
    gated = [list(context.switches(s)) for s in sentences]
    monkeypatch.setattr(context, "_SAYS_A_SWITCH", lambda text, start, end: True)
    assert gated == [list(context.switches(s)) for s in sentences]
    assert sum(map(len, gated)) > 50


def test_any_of_several_patterns_may_match_only_where_one_of_their_strings_is_said() -> None:
    test = may_match_any([re.compile(r"\bback\s+to\b"), re.compile(r"\bnext\s+(?:casualty|patient)\b")])
    assert test("back to two", 0, 11) and test("the next patient", 0, 16) and not test("next one, go", 0, 12)
    assert may_match_any([re.compile(r"\bno\b"), re.compile(r"(?i)pulse")])("nothing", 0, 7)  # one reads nothing


def test_an_alternation_grouped_by_first_character_matches_what_the_flat_one_matches(texts: list[str]) -> None:
    forms = [f for f in clauses._HEAD_FORMS if f not in ("liter", "rr", "hr", "wound", "injury", "injuries")]
    ordered = sorted(set(forms), key=len, reverse=True)
    flat = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(f).replace(r"\ ", r"\s+") for f in ordered)
                      + r")(?![\w-])")
    assert clauses.HEAD.pattern != flat.pattern
    for text in texts:
        lower = text.lower()
        assert [m.span() for m in clauses.HEAD.finditer(lower)] == [m.span() for m in flat.finditer(lower)], text
        assert [m.span() for m in clauses.HEAD.finditer(text)] == [m.span() for m in flat.finditer(text)], text


def test_phrases_that_start_otherwise_are_joined_as_they_are() -> None:
    assert first_grouped([("Ready-Heat", "a"), ("ready", "b")]) == "a|b"
    assert first_grouped([("tq", "tq"), ("cat", "cat"), ("tourniquet", "tourniquet")]) == "(?:tq|tourniquet)|cat"
    assert lexicon.choices(["urgent surgical", "urgent", "priority"]) == r"(?:urgent\s+surgical|urgent)|priority"
