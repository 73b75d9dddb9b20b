"""Which numbers have a sound-alike twin: the pairs tiny.en confuses ("fifteen"/"fifty"), and no others."""

from __future__ import annotations

import pytest

from tcccd.plugins.whisper.review.number_twins import doubts, twin_of


@pytest.mark.parametrize(("number", "twin"), [
    ("0915", "0950"), ("0950", "0915"), ("115", "150"), ("150", "115"), ("17", "70"), ("90", "19"),
    ("1430", "1413"), ("fifteen", "fifty"), ("Fifty", "Fifteen"), ("nineteen", "ninety"), ("thirty", "thirteen"),
])
def test_teens_and_tens_are_twins_both_ways(number, twin):
    assert twin_of(number) == twin and twin_of(twin) == number


@pytest.mark.parametrize("number", ["0912", "120", "96", "20", "12", "10", "11", "1", "0", "twenty", "twelve",
                                    "ten", "gram", "TXA"])
def test_numbers_without_a_sound_alike_have_no_twin(number):
    assert twin_of(number) is None


def test_without_a_decoder_to_ask_nothing_is_doubted():
    """The ctranslate2 backend and partial results have no teacher-forced scorer: uncertain stays the model's."""
    assert doubts("1 gram of TXA at 0950.", None, 3.0) == []
