"""Domain vocabulary: sound-alike runs become the medical term, nothing else changes, nothing is invented."""

from __future__ import annotations

import pytest

from tcccd.plugins.whisper.review.textnorm import corpus_wer, normalize, word_errors
from tcccd.plugins.whisper.review.vocabulary import VocabularyCorrector, read_vocabulary


@pytest.fixture(scope="module")
def corrector():
    return VocabularyCorrector.load(None)


@pytest.mark.parametrize(("heard", "meant"), [
    ("Check the turner kit and mark the time.", "Check the tourniquet and mark the time."),
    ("Give one gram of drink, Sami Casid over 10 minutes.", "Give one gram of tranexamic acid over 10 minutes."),
    ("Airway is clear, no NASA fire and deal airway needed.", "Airway is clear, no nasopharyngeal airway needed."),
    ("Medimac helicopter is 10 minutes out.", "Medevac helicopter is 10 minutes out."),
])
def test_sound_alike_runs_become_terms(corrector, heard, meant):
    assert corrector.correct(heard) == meant


@pytest.mark.parametrize("text", [
    "Perform needle decompression on the right side of the chest.",
    "Heart rate 120 and blood pressure 90 over 60.",
    "Move the casualty onto the litter and secure the straps.",
    "The weather is fine and the road to the north is open.",
    "a little bit more to the left",
    "Sats eighty nine, I mean ninety eight.",
    "",
])
def test_correct_or_unrelated_text_is_left_alone(corrector, text):
    assert corrector.correct(text) == text


COMMON = {"thy", "liter", "the", "kit", "turner", "check", "and", "mark", "time", "one", "of", "saline"}


@pytest.mark.parametrize("heard", ["Thy self thy foe, to thy sweet self too cruel.", "One liter of saline running."])
def test_a_common_word_alone_is_not_turned_into_a_term(heard):
    """'thy' sounds exactly like 'thigh' and 'liter' like 'litter': a word the speaker may have said stays."""
    assert VocabularyCorrector.load(None, common_word=COMMON.__contains__).correct(heard) == heard
    assert VocabularyCorrector.load(None).correct(heard) != heard  # without the rule both are rewritten


@pytest.mark.parametrize(("heard", "meant"), [
    ("Medimac helicopter is 10 minutes out.", "Medevac helicopter is 10 minutes out."),
    ("Check the turner kit and mark the time.", "Check the tourniquet and mark the time."),
])
def test_a_pieced_word_or_a_run_is_still_corrected(heard, meant):
    assert VocabularyCorrector.load(None, common_word=COMMON.__contains__).correct(heard) == meant


@pytest.mark.parametrize(("heard", "term"), [
    ("Patient is hypothermic, wrapped in a heat reflective shell.", "hypothermia"),
    ("Junctional hemorrhage in the groin, wound packed with combat gauze.", "wound packing"),
    ("Online Medevacric Wested, urgent surgical.", "medevac request"),
    ("Two casualty on the litter.", "Casualties"),
])
def test_a_word_heard_whole_is_never_put_in_another_form(corrector, heard, term):
    """A correction fixes a word the model misheard, never the form of one it heard (issue 22: these three, from
    medical_eval, were counted as invented terms)."""
    assert term.lower() not in corrector.correct(heard).lower()


@pytest.mark.parametrize("heard", ["No blood products given.", "Nothing given.", "Blood products? No, none yet.",
                                   "Old fracture of the left arm, healed.", "I'll shield his left eye in a minute."])
def test_a_word_saying_not_or_not_now_is_never_rewritten_into_a_term(corrector, heard):
    """'no blood' sounds like 'whole blood', 'old fracture' like 'open fracture' and "I'll shield" like 'eye
    shield': the rewrite would put on the card as done or present what the medic said was not given, is past or
    is still to come."""
    assert corrector.correct(heard) == heard


@pytest.mark.parametrize("heard", ["His pressure's dropping.", "Her pressure's dropping fast."])
def test_a_term_is_never_made_across_a_word_with_s(corrector, heard):
    """"pressure's dropping" is "pressure is dropping", a clause: rewritten "pressure dressing", it puts a dressing
    nobody put on on the card."""
    assert corrector.correct(heard) == heard


@pytest.mark.parametrize("heard", ["Get him in the truck.", "Let's get him in the HPMK.", "Roll him upside down."])
def test_words_about_a_person_are_never_rewritten_into_a_term(corrector, heard):
    """"get him in" sounds like "ketamine" and "him upside" like "pickup site": a clause about someone, rewritten,
    puts a drug nobody gave on the card."""
    assert corrector.correct(heard) == heard


@pytest.mark.parametrize("heard", ["A gram of calcium right after it.", "Calcium right now."])
def test_a_side_is_never_rewritten_into_a_term(corrector, heard):
    """"calcium right" sounds near "calcium chloride": rewritten, the card names a salt nobody said, and a side said
    there ("tourniquet right") would be lost with it."""
    assert corrector.correct(heard) == heard


@pytest.mark.parametrize("heard", [
    "Tourniquet placed zero nine five two.",  # "nine five" -> "9-line" lost the five: "zero 9-line two"
    "Placed zero nine five five.",
    "IV at ten hundred.",  # "IV at ten" -> "IV access" lost the ten: "IV access hundred"
    "Back to the first one.",  # "first one" -> "FAST1" lost the ordinal
    "Call in line for the bird.",  # "in line" -> "9-line" would write a nine nobody said
])
def test_a_run_is_never_rewritten_into_a_term_that_says_other_numbers(corrector, heard):
    """A time or a dose turned into a term is a number lost without a trace; a term's number nobody said is one
    invented."""
    assert corrector.correct(heard) == heard


@pytest.mark.parametrize(("heard", "meant"), [
    ("Send the nine line now.", "Send the 9-line now."),
    ("The fast one is in the sternum.", "The FAST1 is in the sternum."),
    ("Needle in the second inter costal space.", "Needle in the second intercostal space."),
])
def test_a_term_saying_the_same_numbers_as_the_run_is_still_found(corrector, heard, meant):
    assert corrector.correct(heard) == meant


@pytest.mark.parametrize("heard", ["Open fracture of the tibia, I think.", "Pain in the tibia, I guess.",
                                   "He has a turn, a kit on the left leg."])
def test_a_run_split_by_a_mark_never_becomes_a_one_word_term(corrector, heard):
    """A mark is a pause between two phrases: "tibia, I" is never "TBI", "turn, a kit" never "tourniquet"."""
    assert corrector.correct(heard) == heard


@pytest.mark.parametrize("heard", ["Chuck me a tourniquet and some gauze, quick.",
                                   "Chest is clear both sides, no need for a seal."])
def test_a_word_heard_right_never_brings_an_unheard_one_into_a_term(corrector, heard):
    """"me a tourniquet" is not "CAT tourniquet" and "chest is" not "chest seal": with the shared word set aside,
    what is left does not sound like the rest of the term."""
    assert corrector.correct(heard) == heard


def test_hex_ten_stays_as_heard_as_tiny_en_was_never_seen_writing_hextend_so(corrector):
    """'hex ten' -> 'Hextend' would drop a ten that may be a volume said; on 42 clips saying Hextend tiny.en wrote
    'hex end', 'Hexton', 'next end'... and never 'hex ten' (bench/asr_hextend.py), so no exception is kept."""
    assert corrector.correct("Hung five hundred of hex ten.") == "Hung five hundred of hex ten."
    assert corrector.correct("Hold the hex end.") == "Hold the Hextend."


def test_a_misheard_word_ending_like_the_term_is_still_corrected(corrector):
    assert corrector.correct("Junctional bleeding, wound packed with combat claws.") == \
        "Junctional bleeding, wound packed with combat gauze."


def test_vocabulary_file_errors_say_what_is_expected(tmp_path):
    empty = tmp_path / "vocab.txt"
    empty.write_text("# only a comment\n\n")
    with pytest.raises(ValueError, match="one term per line"):
        read_vocabulary(empty)
    with pytest.raises(ValueError, match="cannot read"):
        read_vocabulary(tmp_path / "missing.txt")


def test_packaged_vocabulary_holds_the_medics_terms():
    terms = read_vocabulary(_packaged())
    for term in ("tourniquet", "hemostatic gauze", "tranexamic acid", "nasopharyngeal airway",
                 "needle decompression", "medevac", "litter"):
        assert term in terms


def _packaged():
    from tcccd.plugins.whisper.review.vocabulary import default_vocabulary_path

    return default_vocabulary_path()


@pytest.mark.parametrize(("reference", "hypothesis", "errors"), [
    ("tourniquet applied at zero nine fifteen", "Tourniquet applied at 09:15.", 0),
    ("heart rate one twenty", "Heart rate 120.", 0),
    ("TXA given", "T X A given", 0),
    ("respiratory rate sixteen, oxygen saturation ninety five percent", "Respiratory rate 16 oxygen saturation 95%", 0),
    ("tourniquet applied at zero nine fifteen", "turn the kit applied at 0915", 3),
    ("one gram of tranexamic acid at ten fifteen", "1 g tranexamic acid at 1015", 0),
    ("ketamine fifty milligrams, fentanyl eight hundred micrograms", "Ketamine 50 mg, fentanyl 800 mcg", 0),
    ("one gram of tranexamic acid", "one gram tranexamic acid of", 1),
])
def test_wer_normalises_numbers_and_punctuation(reference, hypothesis, errors):
    assert word_errors(reference, hypothesis).errors == errors


def test_corpus_wer_weights_by_reference_words():
    assert corpus_wer([("a b c d", "a b c d"), ("x y", "")]) == pytest.approx(2 / 6)
    assert normalize("Blood pressure: 100/70.") == "blood pressure 100 over 70"


def test_every_rewrite_is_recorded_with_what_was_heard_and_where(corrector):
    heard = "Check the turner kit. Medimac helicopter is 10 minutes out."
    text, applied = corrector.apply(heard)
    assert text == "Check the tourniquet. Medevac helicopter is 10 minutes out."
    assert [(a.heard, a.term) for a in applied] == [("turner kit", "tourniquet"), ("Medimac", "Medevac")]
    for rewrite in applied:
        assert heard[rewrite.start_char:rewrite.end_char] == rewrite.heard
        assert corrector.min_similarity <= rewrite.similarity <= 1.0
    assert corrector.apply("The road to the north is open.") == ("The road to the north is open.", [])
