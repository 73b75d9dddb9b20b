"""The numbers a run of words says: what the vocabulary step holds a rewrite to."""

from __future__ import annotations

import pytest

from tcccd.plugins.whisper.review.said_numbers import SpokenNumbers, numbers_said, spoken_zeros


@pytest.mark.parametrize(("text", "numbers"), [
    ("nine line", ("9",)),
    ("9-line", ("9",)),
    ("nine five", ("95",)),  # read together, as textnorm scores a time
    ("first one", ("first", "1")),
    ("FAST1", ("1",)),
    ("ten hundred", ("1000",)),
    ("rule of nines", ("9",)),  # a plural number word is the number
    ("DD 1380", ("1380",)),
    ("thirteen eighty", ("1380",)),
    ("second intercostal space", ("second",)),
    ("hex ten", ("10",)),
    ("Hextend", ()),
    ("turn the kit", ()),
])
def test_a_run_says_its_numbers_in_order(text, numbers):
    assert numbers_said(text.split()) == numbers


def test_oh_is_zero_only_beside_a_number():
    words = ["at", "oh", "nine", "hundred", "and", "then", "oh", "well", "oh"]
    assert spoken_zeros(words) == {1}
    assert numbers_said(words, spoken_zeros(words)) == ("0900",)
    assert numbers_said(words) == ("900",)  # "oh" read as a word
    assert numbers_said(["oh", "my"], spoken_zeros(["oh", "my"])) == ()


def test_a_transcript_knows_which_runs_say_numbers():
    spoken = SpokenNumbers(["IV", "at", "ten", "hundred", "hours"])
    assert spoken.in_run(0, 3) and not spoken.in_run(0, 2) and not spoken.in_run(4, 5)
    assert spoken.of_run(0, 3) == ("10",)
    assert spoken.of_run(2, 4) == ("1000",)
