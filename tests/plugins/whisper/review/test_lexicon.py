"""The packaged TCCC lexicon: big enough to matter, and no term overwrites another term or a correct word."""

from __future__ import annotations

import pytest

from tcccd.plugins.whisper.review.vocabulary import (
    MIN_FUZZY_PHONEMES,
    Phonemizer,
    VocabularyCorrector,
    default_vocabulary_path,
    read_vocabulary,
)


@pytest.fixture(scope="module")
def terms():
    return read_vocabulary(default_vocabulary_path())


@pytest.fixture(scope="module")
def corrector(terms):
    return VocabularyCorrector(terms, Phonemizer())


def test_lexicon_covers_the_tccc_guidance(terms):
    assert len(terms) >= 250
    assert len({t.lower() for t in terms}) == len(terms), "a term is listed twice"
    for term in ("tranexamic acid", "ketamine", "OTFC", "ertapenem", "moxifloxacin", "naloxone", "whole blood",
                 "junctional tourniquet", "pelvic binder", "MARCH", "PAWS", "battle roster number", "urgent surgical",
                 "ambulatory", "pickup zone", "hypothermia prevention and management kit"):
        assert term in terms


def test_no_two_terms_sound_alike_enough_to_rewrite_each_other(terms, corrector):
    from rapidfuzz.distance import Levenshtein

    sounds = {t: corrector._phonemizer.sounds(t) for t in terms}
    close = []
    for i, a in enumerate(terms):
        for b in terms[i + 1:]:
            if 0.6 <= len(sounds[a]) / max(1, len(sounds[b])) <= 1.6:
                needed = 1.0 if min(len(sounds[a]), len(sounds[b])) < MIN_FUZZY_PHONEMES else corrector.min_similarity
                if 1.0 - Levenshtein.normalized_distance(sounds[a], sounds[b]) >= needed:
                    close.append((a, b))
    assert close == []


# Words the lexicon was pruned for: the term left out -> a correct sentence it would have rewritten.
LEFT_OUT = {
    "unresponsive": "The casualty is responsive and breathing.",
    "trachea": "Check for tracheal deviation.",
    "pelvis": "Apply the pelvic binder now.",
    "burn injury": "Suspect a traumatic brain injury.",
    "frostbite": "Give freeze dried plasma.",
    "tachycardia": "Heart rate is slowing, bradycardia.",
}


def test_correct_words_near_a_term_are_left_alone(terms, corrector):
    for left_out, sentence in LEFT_OUT.items():
        assert left_out not in terms
        assert corrector.correct(sentence) == sentence


def _rewritten(corrector, terms):
    """Terms that, heard exactly right in a plain sentence, the corrector still changes."""
    return [t for t in terms if corrector.correct(f"we noted the {t} on the card") != f"we noted the {t} on the card"]


def test_single_word_terms_heard_correctly_stay(terms, corrector):
    assert _rewritten(corrector, [t for t in terms if " " not in t]) == []


def test_multi_word_terms_heard_correctly_stay(terms, corrector):
    assert _rewritten(corrector, terms) == []
