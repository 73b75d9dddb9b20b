"""Numbers in a form nobody says where a time or quantity is expected: found, and read from the pieces heard."""

from __future__ import annotations

import pytest

from tcccd.plugins.whisper.review.number_forms import broken_numbers, heard_digits


@pytest.mark.parametrize(("reading", "number", "kind"), [
    ("Tourniquet applied at 0.515.", "0.515", "time"),  # tiny.en's "zero nine fifteen"
    ("Second tourniquet above the first at 0.922", "0.922", "time"),
    ("tourniquet up line at 0.84d.", "0.84d", "time"),
    ("Last meal at 0.6 hundred.", "0.6 hundred", "time"),
    ("tourniquet apply that 0-8-4-D.", "0-8-4-D", "time"),  # "at" heard as "that": a run led by a zero
    ("gave TXA at 0-9-20", "0-9-20", "time"),  # a grouping the audio check did not take
    ("Blood pressure 90/60, pulse 1 30 and weak.", "1 30", "quantity"),
    ("Heart rate 1-4-D, blood pressure", "1-4-D", "quantity"),
    ("blood pressure at the over 4-D.", "4-D", "quantity"),
    ("Respiratory rate 28th and shallow", "28th", "quantity"),
    ("ketamine 2 5 milligrams", "2 5", "quantity"),
    ("TXA given at zero 930.", "zero 930", "time"),  # a word and digits: 0930
    ("pulse 1, 30, weak", "1, 30", "quantity"),  # a split number joined by a comma
])
def test_a_number_its_context_cannot_hold_is_found(reading, number, kind):
    [(match, found)] = broken_numbers(reading)
    assert (match.group(), found) == (number, kind)


@pytest.mark.parametrize("reading", [
    "Tourniquet applied at 0915.", "tourniquet at 9:15", "BP 120/80, pulse 110, 98%", "give naloxone 0.4 mg",
    "naloxone 0.4", "Needle decompression at the 5th intercostal space", "Ketamine 50mg IV", "at 10 we moved",
    "1 g TXA at 1030", "Go forward 10 meters.", "two litter patients, 1 ambulatory", "",
    "0930 pulse 110, 0945 pulse 120.",  # a reading, then a time: two numbers, each in its form
])
def test_a_number_in_a_form_its_context_holds_or_with_no_context_is_left_alone(reading):
    assert broken_numbers(reading) == []


@pytest.mark.parametrize(("run", "digits"), [
    ("0.922", "0922"), ("0.515", "0515"), ("1 30", "130"), ("1-4-D", "140"), ("0.84d", "0840"),
    ("0-8-4-D", "0840"), ("0.6 hundred", "0600"), ("28th", "28"), ("4-D", "40"), ("zero 930", "0930"),
])
def test_the_pieces_heard_are_read_as_the_digits_they_stand_for(run, digits):
    """A 'D' after a digit is the '-ty' of forty; 'hundred' two zeros: read, never a digit the model did not
    write as a sound."""
    assert heard_digits(run) == digits


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    from tcccd.kit.testing import PluginHarness

    with PluginHarness("whisper", {"beam_size": 5}, tmp_path_factory.mktemp("whisper")) as h:
        yield h


def bench_clip(corpus, text, voice, noise_seed=None):
    """A clip as bench/asr_corpus.build_split makes it (140 wpm, 0.25 s of silence either side, the noise floor
    of a set's first noisy clip)."""
    import numpy as np

    pad = np.zeros(4000, np.float32)
    audio = np.concatenate([pad, corpus.speak(text, voice, 140), pad])
    if noise_seed is not None:
        rng = np.random.default_rng(noise_seed)
        audio = corpus.add_noise_floor(audio, float(rng.uniform(25, 35)), rng)
    return audio


@pytest.mark.slow
@pytest.mark.parametrize(("text", "voice", "noise_seed", "said"), [
    ("second tourniquet applied above the first at zero nine twenty two", "en-us+f2", None, "0922"),  # 0.922
    ("tourniquet applied at zero nine fifteen", "en-us", None, "0915"),  # heard 0.515
    ("bright red blood spurting from the right thigh, tourniquet applied at zero eight forty", "en-us+m3", 21,
     "0840"),  # heard 0.84d
])
def test_no_number_in_a_form_nobody_says_is_left_unmarked(harness, corpus, text, voice, noise_seed, said):
    """Whatever the model writes there, a time in a broken form is either written as a reading of the digits
    heard or listed in `uncertain` with its readings: the card never shows it as confirmed unless the audio
    supports one reading clearly."""
    from tcccd.kit.audio import wav_bytes
    from tcccd.wire.protocol import AudioFormat, Message

    [reply] = harness.request(Message("transcribe", payload=wav_bytes(bench_clip(corpus, text, voice, noise_seed),
                                                                     16000), final=True, audio=AudioFormat("wav")))
    segments = reply.data["segments"]
    heard = " ".join(s["heard"] for s in segments)
    assert broken_numbers(heard), heard  # tiny.en writes the time in a broken form here: the case under test
    for segment in segments:
        doubts = [(u["start_char"], u["end_char"], u) for u in segment["uncertain"]]
        for match, _ in broken_numbers(segment["text"]):
            over = [u for a, b, u in doubts if a < match.end() and match.start() < b]
            assert over and all(u["readings"] and u["audio_logprob_heard"] is not None for u in over), segment
    for segment in segments:  # a number that is not what was said is never left confirmed
        marked = {(u["start_char"], u["end_char"]) for u in segment["uncertain"]}
        wrong = [w for w in segment["words"] if any(c.isdigit() for c in w["text"]) and said not in w["text"]]
        assert all((w["start_char"], w["end_char"]) in marked for w in wrong), segment
