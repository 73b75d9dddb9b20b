"""From what the model heard to the record: vocabulary terms, then numbers, with every change accounted for."""

from __future__ import annotations

import pytest

from tcccd.plugins.whisper.heard import SegmentWriter
from tcccd.plugins.whisper.vocabulary import VocabularyCorrector

from .conftest import rebuild_text


@pytest.fixture(scope="module")
def corrector():
    return VocabularyCorrector.load(None)


def rebuild(written) -> str:
    return rebuild_text(written.heard, written.corrections, written.numbers)


def test_terms_then_numbers_and_the_trail_rebuilds_the_text(corrector):
    written = SegmentWriter(corrector, write_numbers=True).write(
        " Check the turner kit, give one gram of drink, Sami Casid, heart rate one twenty.")
    assert written.heard == "Check the turner kit, give one gram of drink, Sami Casid, heart rate one twenty."
    assert written.text == "Check the tourniquet, give 1 g tranexamic acid, heart rate 120."
    assert [c["term"] for c in written.corrections] == ["tourniquet", "tranexamic acid"]
    assert [(n["heard"], n["written"], n["rule"]) for n in written.numbers] == [
        ("one gram of ", "1 g ", "dose"), ("one twenty", "120", "vital")]
    assert rebuild(written) == written.text


def test_each_step_can_be_turned_off(corrector):
    heard = "Turn the kit applied, blood pressure one twenty over eighty."
    numbers_only = SegmentWriter(None, write_numbers=True).write(heard)
    assert numbers_only.text == "Turn the kit applied, blood pressure 120/80."
    assert numbers_only.corrections == [] and rebuild(numbers_only) == numbers_only.text
    terms_only = SegmentWriter(corrector, write_numbers=False).write(heard)
    assert terms_only.text == "Tourniquet applied, blood pressure one twenty over eighty."
    assert terms_only.numbers == []
    untouched = SegmentWriter(None, write_numbers=False).write(heard)
    assert untouched.text == heard and untouched.corrections == untouched.numbers == []


@pytest.mark.parametrize("heard", ["", " ", ".", "...", " - "])
def test_no_word_heard_gives_no_segment(corrector, heard):
    assert SegmentWriter(corrector, write_numbers=True).write(heard) is None
