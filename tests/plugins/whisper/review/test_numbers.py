"""Inverse normalisation: both spellings of a number land on the medic's form, nothing is invented."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tcccd.plugins.whisper.review.numbers import UNITS, inverse_normalize
from tcccd.plugins.whisper.review.textnorm import normalize


@pytest.mark.parametrize(("spoken", "digits", "written"), [
    ("tourniquet applied at zero nine fifteen", "tourniquet applied at 09:15", "tourniquet applied at 0915"),
    ("blood pressure one twenty over eighty", "blood pressure 120 over 80", "blood pressure 120/80"),
    ("oxygen saturation ninety two percent", "oxygen saturation 92 percent", "oxygen saturation 92%"),
    ("give one gram of TXA", "give 1 gram of TXA", "give 1 g TXA"),
    ("ondansetron four milligrams", "ondansetron 4 milligrams", "ondansetron 4 mg"),
    ("OTFC eight hundred micrograms", "OTFC 800 micrograms", "OTFC 800 mcg"),
    ("ketamine fifty milligrams", "ketamine 50 milligrams", "ketamine 50 mg"),
    ("heart rate one twenty", "heart rate 120", "heart rate 120"),
    ("naloxone zero point four milligrams", "naloxone 0.4 milligrams", "naloxone 0.4 mg"),
    ("respiratory rate twenty-eight and shallow", "respiratory rate 28 and shallow", "respiratory rate 28 and shallow"),
    ("landing at fourteen thirty", "landing at 14:30", "landing at 1430"),
])
def test_words_and_digits_land_on_one_written_form(spoken, digits, written):
    assert inverse_normalize(spoken)[0] == written
    assert inverse_normalize(digits)[0] == written


@pytest.mark.parametrize("text", [
    "one of the casualties is not breathing",
    "a second tourniquet above the knee",
    "two litter patients and one ambulatory",
    "at 0.515",  # tiny.en's "zero nine fifteen": reading it as 0915 would be a guess
    "tourniquet at 9:15",  # 0915 or 2115: not ours to decide
    "one over two",
    "give 1 g TXA, heart rate 120, BP 120/80, SpO2 92%, time 0915",
    "",
])
def test_ordinary_words_and_written_forms_are_left_alone(text):
    assert inverse_normalize(text) == (text, [])


def test_each_rewrite_is_recorded_with_span_and_rule():
    heard = "Pulse one ten. Gave one gram of TXA at zero nine fifteen, BP ninety over sixty."
    text, rewrites = inverse_normalize(heard)
    assert text == "Pulse 110. Gave 1 g TXA at 0915, BP 90/60."
    assert [(r.heard, r.written, r.rule) for r in rewrites] == [
        ("one ten", "110", "vital"), ("one gram of ", "1 g ", "dose"), ("zero nine fifteen", "0915", "time"),
        ("ninety over sixty", "90/60", "ratio")]
    for rewrite in rewrites:
        assert heard[rewrite.start_char:rewrite.end_char] == rewrite.heard


def test_numbers_split_by_punctuation_are_not_joined():
    assert inverse_normalize("heart rate one, twenty percent")[0] == "heart rate 1, 20%"


WORDS = ["zero", "one", "two", "five", "nine", "twelve", "fifteen", "twenty", "thirty", "eighty", "ninety",
         "hundred", "point", "over", "percent", "of", "at", "heart", "rate", "pulse", "is", "the", "a", "second",
         "casualty", "TXA", "gram", "grams", "milligrams", "micrograms", "12", "0.4", "09:15", "120/80", "92%",
         "mg", "Tourniquet", "to", "0", "9", "15", "120", "and", "14:30", "0-9-15", "0.515", "1 30"]


@st.composite
def transcripts(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), max_size=14))
    gaps = draw(st.lists(st.sampled_from([" ", " ", " ", "-", ", ", ". "]), min_size=len(words), max_size=len(words)))
    return "".join(w + g for w, g in zip(words, gaps, strict=True)).strip()


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z]+", text.lower()) if w not in {u.lower() for u in UNITS.values()}]


def _digits(text: str) -> str:
    return "".join(re.findall(r"\d", normalize(text)))


@pytest.mark.parametrize("heard", ["give two to", "Give 2 to", "give one to", "one to"])
def test_a_text_ending_on_a_range_begun_is_left_as_heard(heard):
    """A partial result cut after "two to": the fresh-clone run of 2026-11-25 raised IndexError here, and the
    exception ended the microphone's stream in the whisper stage (the talk-over e2e test lost its transcript)."""
    assert inverse_normalize(heard) == (heard, [])


@settings(max_examples=400, deadline=None)
@given(transcripts())
@example("pulse zero 09:15")  # 'pulse 0 09:15', then 'pulse 0 0915': a digit after a digit is inside a number too
@example("pulse twelve twelve 09:15")
@example("grams, pulse, 0, 120 gram grams")  # '0, 120 g' then '0120 g': a unit symbol is context, as its word
@example("pulse-zero, 0 0, 0.")  # 'pulse-0, 0 0, 0.' then '0000': a vital sign's digits joined a run
@example("pulse zero nine, 15")
@example("pulse-thirty, 0-9-15.")  # the run beside it becomes one time: the vital sign is written after all
@example("0-9-15, 12 percent, 1 30.")  # '12 percent' is a number of its own, not a piece of the time before it
@example("two 0-9-15 zero, pulse. 9 eighty grams. pulse rate twenty twelve, 0-9-15 twelve thirty.")
def test_it_never_adds_content_and_is_idempotent(heard):
    text, rewrites = inverse_normalize(heard)
    out_words, in_words = iter(_words(heard)), _words(text)
    assert all(word in out_words for word in in_words), "a word was written that was not heard, or reordered"
    rebuilt = heard
    for rewrite in reversed(rewrites):
        assert _digits(rewrite.written) == _digits(rewrite.heard), f"digits not from the words heard: {rewrite}"
        rebuilt = rebuilt[:rewrite.start_char] + rewrite.written + rebuilt[rewrite.end_char:]
    assert rebuilt == text
    assert inverse_normalize(text) == (text, [])


@pytest.mark.parametrize(("heard", "written", "reading"), [
    ("Pulse is one hundred and ten", "Pulse is 110", "110"),
    ("pulse is two hundred fifty", "pulse is 250", "250"),
    ("Pulse is 100 and 10.", "Pulse is 110.", "110"),  # the decoder split the number: its grouping is checked
    ("blood pressure one hundred and ten over seventy", "blood pressure 110/70", "110 over 70"),
    ("tourniquet at 0-9-15", "tourniquet at 0915", "0915"),
    ("tourniquet at 0, 9, 15", "tourniquet at 0915", "0915"),
    ("gave TXA at 0-920", "gave TXA at 0920", "0920"),
    ("give two to three milligrams of morphine", "give 2 to 3 mg morphine", "2 to 3 milligrams of "),
    ("naloxone zero point four milligrams", "naloxone 0.4 mg", "0.4 milligrams"),
])
def test_numbers_are_written_as_heard_and_each_carries_the_reading_the_audio_checks(heard, written, reading):
    text, rewrites = inverse_normalize(heard)
    assert text == written
    assert [r.reading for r in rewrites] == [reading]


@pytest.mark.parametrize("heard", [
    "Tourniquet up line at 0.0515",  # 0915 would need a 9 nobody said
    "turn the kit apply that 0-0-5-15",  # five digits: no time of its own inside them
    "the score was 100 and 150",  # 150 is not under a hundred: two numbers
    "pulse 100, and 10 more",
])
def test_no_number_is_made_from_digits_the_audio_did_not_give(heard):
    assert inverse_normalize(heard) == (heard, [])


ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def spoken(n: int, with_and: bool) -> str:
    """n (0-999) as a medic says it: 'one hundred and ten', 'two hundred fifty', 'forty two'."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    rest = n % 100
    head = f"{ONES[n // 100]} hundred"
    return head if rest == 0 else f"{head} {'and ' if with_and else ''}{spoken(rest, with_and)}"


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 999), st.booleans(), st.sampled_from(["pulse is", "heart rate", "respiratory rate"]))
def test_a_spoken_vital_sign_becomes_exactly_its_value(value, with_and, cue):
    text, _ = inverse_normalize(f"{cue} {spoken(value, with_and)}")
    assert text == f"{cue} {value}"


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 23), st.integers(10, 59), st.sampled_from(["tourniquet applied at", "TXA given at"]))
def test_a_spoken_time_becomes_four_digits_only_when_every_digit_was_said(hour, minute, lead):
    hour_words = f"zero {ONES[hour]}" if hour < 10 else spoken(hour, False)
    text, _ = inverse_normalize(f"{lead} {hour_words} {spoken(minute, False)}")
    assert text == f"{lead} {hour:02d}{minute:02d}"
    split, _ = inverse_normalize(f"{lead} {hour:02d}-{minute}")  # the decoder's "09-15"
    assert split == f"{lead} {hour:02d}{minute}"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 999), st.booleans(),
                          st.sampled_from(["", " milligrams", " percent", " over eighty", " grams of TXA"])),
                min_size=1, max_size=3),
       st.sampled_from(["pulse is", "give", "then", "at", "BP"]))
def test_every_digit_written_comes_from_a_number_heard(numbers, lead):
    """No lead "and": it joins two numbers into one ("five hundred and one" is 501, as a listener hears it)."""
    heard = " ".join(f"{lead} {spoken(n, a)}{tail}" for n, a, tail in numbers)
    text, rewrites = inverse_normalize(heard)
    said = [str(n) for n, _, _ in numbers] + ["80" for _, _, tail in numbers if "eighty" in tail]
    for rewrite in rewrites:
        digits = re.findall(r"\d+(?:\.\d+)?", rewrite.written)
        assert "".join(digits) == "".join(re.findall(r"\d", normalize(rewrite.heard))), rewrite
    assert not Counter(re.findall(r"\d+", text)) - Counter(said + re.findall(r"\d+", heard)), (heard, text)


@pytest.mark.parametrize(("heard", "written"), [
    ("pulse one ten, 98 percent", "pulse 110, 98%"),  # a digit group with its own context does not hold it back
    ("pulse zero 09:15", "pulse 0 09:15"),  # the clock time after a number is its tail, in digits as in words
    ("pulse zero nine, 15", "pulse zero nine, 15"),  # written '09, 15' it would read as the time 0915
])
def test_a_number_written_beside_digits_reads_the_same_on_a_second_pass(heard, written):
    assert inverse_normalize(heard)[0] == written
    assert inverse_normalize(written) == (written, [])
