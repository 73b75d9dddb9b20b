"""Field reports as medics give them, and what each part puts on the card.

- A doctor's recommendation over the radio, negations typed without an apostrophe, a device that kinked or came
  loose and was not put back, kit ordered but not here, care on an earlier deployment, a dose that "went in" (not
  the nose), and a prolonged-care flowsheet whose heading gives its readings' time.
- Radio procedure and short replies: a request to say again, the other station reading back, a casualty who is
  not this medic's, a one-word "no" or "n/a" after the thing it denies, a dose still to come at noon; the weapon
  "small arms"; slang drug names; a clock's minutes before a reading's word; AVPU said as "with it"; a correction two
  utterances later that says only the time.
- A condition said first, a drip stopped, a drug turned down, a tourniquet said twice in one breath; a near miss
  ("almost gave"), a dropped vial, a dose drawn up and not pushed; a second tourniquet placed "above it".
And the same words where the act was done.

Sentences written for these tests (not the corpus's). Each asserts the whole card, so a field added or lost fails.
The medic speaks at 10:00.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import card_of

NOTHING_DONE = [
    # a recommendation, a denial typed without its apostrophe, a device that failed or came off, kit not here, an
    # earlier deployment, a plan
    "The surgeon on the radio recommends fentanyl fifty micrograms IV.",
    "Teleconsult suggests two grams of cefazolin IV and a second unit of blood.",
    "Neither TXA nor morphine so far.",
    "the npa wouldnt pass on the left",
    "he couldnt get the IO in",
    "Needle D kinked, never got it through the chest wall.",
    "TQ came loose on the litter, we didn't put it back on, bleeding stopped.",
    "Whole blood's ordered but not here.",
    "He had a chest seal on the same side in Afghanistan, old scar there.",
    "I'll shield his left eye in a minute.",
    # radio procedure and short replies
    "Say again the ketamine dose, over.",
    "Chalice copies chest seal left, over.",
    "The driver has a TQ on, he's not my patient.",
    "Ketamine, no.",
    "Zofran, n/a.",
    "Chest seal keeps peeling, too sweaty.",
    "Moxi 400 PO at noon.",
    # a condition said first, a drip stopped, a drug turned down
    "Should his breathing get worse, we go to a needle D.",
    "If he vomits, zofran 4 mg IV.",
    "Stopped the fentanyl infusion, he's too drowsy.",
    "He turned down the Tylenol.",
    # a near miss, a dropped vial, a dose drawn up and not pushed
    "Almost gave him the fentanyl, his sats dropped.",
    "Dropped the ketamine vial, drawing up another.",
    "Drew up 50 of ketamine, didn't push it.",
    "Did anybody give him TXA",
    "The medic is pushing morphine on the guy by the door.",
    "Drew up the fentanyl and caught it before I pushed, wrong drug.",
]

DONE = [
    # the act done beside words like those above
    ("Doc recommended ketamine, so I pushed twenty milligrams of ketamine IV.",
     {"c1 f medication[ketamine] = 20 mg", "c1 f medication[ketamine].route = iv"}),
    ("We gave the ketamine, didnt give the TXA.", {"c1 f medication[ketamine] = yes"}),
    ("TXA one gram in, pulse 110.", {"c1 f medication[txa] = 1 g", "c1 c vitals[~1000].pulse = 110"}),
    ("Fentanyl 100 mcg IN.", {"c1 f medication[fentanyl] = 100 mcg", "c1 f medication[fentanyl].route = in"}),
    ("i gel wouldnt seat so went to a cric", {"c1 e airway[cric] = yes"}),
    ("TQ came loose on the litter, we put it back on.", {"c1 b tourniquet[-] = yes"}),
    # a flowsheet heading's time is its readings' time
    ("PFC update, 0950. Pulse 96, BP 118/74.", {"c1 c vitals[0950].pulse = 96", "c1 c vitals[0950].bp = 118/74"}),
    ("0945 obs. Resps 16, pain 3.", {"c1 c vitals[0945].rr = 16", "c1 c vitals[0945].pain = 3"}),
    ("Flowsheet, zero nine thirty. Sats ninety five on room air.", {"c1 c vitals[0930].spo2 = 95%"}),
    ("Update. Pulse 110.", {"c1 c vitals[~1000].pulse = 110"}),  # no time said: the clock's minute
    # each slot where it was said
    ("Small arms contact, GSW to the right thigh.",
     {"c1 b mechanism = gsw", "c1 b injury[right thigh] = gunshot wound"}),
    ("Fent 50 mcg IV at 0950.", {"c1 f medication[fentanyl] = 50 mcg", "c1 f medication[fentanyl].route = iv",
                                 "c1 f medication[fentanyl].time = 0950"}),
    ("Ertap 1 g IV.", {"c1 f medication[ertapenem] = 1 g", "c1 f medication[ertapenem].route = iv"}),
    ("ketamine 20 mg IV at 9:52 resps picking up", {
        "c1 f medication[ketamine] = 20 mg", "c1 f medication[ketamine].route = iv",
        "c1 f medication[ketamine].time = 0952"}),
    ("He's with it, alert, pain's a four.", {"c1 c vitals[~1000].avpu = a", "c1 c vitals[~1000].pain = 4"}),
    ("His pressure's dropping, pulse 130.", {"c1 c vitals[~1000].pulse = 130"}),
    # a tourniquet said twice in one breath is one
    ("tq right arm 0905 tq time 0905",
     {"c1 b tourniquet[right arm] = extremity", "c1 b tourniquet[right arm].time = 0905"}),
    ("tq tq left leg 0940", {"c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].time = 0940"}),
    ("Stopped the bleeding with a TQ on the left leg.", {"c1 b tourniquet[left leg] = extremity"}),
]


@pytest.mark.parametrize("heard", NOTHING_DONE)
def test_what_was_not_done_gives_nothing(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize(("heard", "lines"), DONE)
def test_what_was_done_is_on_the_card_with_the_slots_said(card_stage: PluginHarness, heard: str,
                                                          lines: set[str]) -> None:
    assert card_of(card_stage, heard) == lines


def test_a_correction_that_says_only_the_time_keeps_the_limb(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "TQ right leg at 0905.", "Ketamine 50 mg IM.", "Wait, the TQ was 0950.") == {
        "c1 b tourniquet[right leg] = extremity", "c1 b tourniquet[right leg].time = 0950",
        "c1 f medication[ketamine] = 50 mg", "c1 f medication[ketamine].route = im"}


@pytest.mark.parametrize("said", [("CAT left arm at 0910.", "Still bleeding, second CAT right above it at 0925."),
                                  ("CAT left arm at 0910. Still bleeding, second CAT right above it at 0925.",)])
def test_a_second_tourniquet_placed_above_the_first_is_on_its_limb(card_stage: PluginHarness,
                                                                   said: tuple[str, ...]) -> None:
    assert card_of(card_stage, *said) == {
        "c1 b tourniquet[left arm] = extremity", "c1 b tourniquet[left arm].type = cat",
        "c1 b tourniquet[left arm].time = 0910", "c1 b tourniquet[left arm#2] = extremity",
        "c1 b tourniquet[left arm#2].type = cat", "c1 b tourniquet[left arm#2].time = 0925"}
