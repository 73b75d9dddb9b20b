"""Several voices on one card: a second voice correcting the medic, the medic putting another's report right, an
order relayed from a doctor, care that went to someone else, teaching; and the slots such talk moves.

- A second voice: "Doc, you've got the wrong arm, it's his left" restates the limb of the last tourniquet, and
  after "Back to one" the last entry of casualty one, never the entry of the casualty said just before.
- "No, it was morphine" after another's report replaces the drug; "no" between two numbers, or before a route,
  restates that value.
- "Scratch the TXA from earlier", "that morphine was actually casualty two's", a cue followed by the last entry's
  item denied ("Scratch that, this one hasn't had TXA"), "Take that off his card": the entry comes off the card.
- A handover to the flight medic says again what the card holds: the entries already made, given what is new.
- "No you didn't, that was morphine" replaces the drug and keeps none of the other drug's slots; "Doc, it's on his
  left arm" restates a limb; "no wait, I'm still on one" keeps the casualty; "actually" is a cue only opening a
  clause ("he never actually got the Zofran" is a denial).
- Not done: "said to give", a drug that "went to the gunner", "the wrong guy", teaching ("say it back"), a question
  after a clause of its own, a bag hung "but it's not running yet", "scrub the", "cancel the", "hang on, not yet",
  "cutting the splint off", kit counted or restocked; "reacts to pain" is how he responds, no allergy, and "allergic
  to something" names none.
- Slots: after "then", a time belongs to the step that follows it; a drug named again by "that's" is one drug; a
  report's heading time ("Morning report, zero six hundred.") is its readings' column; "half a liter" is 0.5 L (in
  range); "back on" is no region.

Sentences written for these tests (not the corpus's). Each asserts the whole card. The medic speaks at 10:00.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import card_of

NOTHING_DONE = [
    "Surgeon on the net said to give TXA two grams IV.",
    "Fentanyl went to the gunner, this one hasn't had any.",
    "That's the wrong guy, the TXA went on the other stretcher.",
    "For you new guys, ketamine is fifty IM, say it back.",
    "Once we rolled him, did anybody see an exit wound",
    "Lost my landmarks on the cric, bagging him for now.",
    "Morphine, um, hang on, not yet, let's see his pressure.",
    "Scrub the fentanyl, his resps are down.",
    "Cancel the TXA, he's past three hours.",
    "He never actually got the Zofran.",
    "We didn't give any morphine.",  # "didn't give any" had been read as a denial of what came before it
    "Morphine, we didn't give any.",
    "Cutting the splint off to look at the wound.",
    # kit and label talk, thinking aloud, an allergy to something unknown
    "Counting what's left: three CATs and two chest seals.",
    "Restock list: TXA, ketamine and HPMKs.",
    "He says he's allergic to something, can't remember what.",
    "The ertapenem is overdue.",
]

SAID = [
    # an apology after an entry is no correction waiting for the next one
    (("Ketamine twenty IV, sorry.", "Ondansetron four IV."),
     {"c1 f medication[ketamine] = 20", "c1 f medication[ketamine].route = iv", "c1 f medication[ondansetron] = 4",
      "c1 f medication[ondansetron].route = iv"}),
    # allergies answered on the radio and read off the tags
    (("Any allergies, over?", "Penicillin, over."), {"c1 a header.allergies = penicillin"}),
    (("Check his tags, any allergies?", "Tags say sulfa, Doc."), {"c1 a header.allergies = sulfa"}),
    # a question asked as an order, and the answer told as the casualty's
    (("Ask him his pain, zero to ten.", "He says a seven."), {"c1 c vitals[~1000].pain = 7"}),
    # the time asked for a device, answered with the clock alone, or with where it was written
    (("When did the chest seal go on?", "Eight fifty five."),
     {"c1 e breathing[chest seal] = yes", "c1 e breathing[chest seal].time = 0855"}),
    (("What time did the CAT go on?", "Nine thirty two, I wrote it on his hand."),
     {"c1 b tourniquet[-] = yes", "c1 b tourniquet[-].time = 0932", "c1 b tourniquet[-].type = cat"}),
    # a second voice correcting the medic's limb, in the same casualty and after a switch
    (("TQ on the right arm at 0935.", "Doc, you've got the wrong arm, it's his left."),
     {"c1 b tourniquet[left arm] = extremity", "c1 b tourniquet[left arm].time = 0935"}),
    (("Casualty one, CAT left leg at 0940.", "Casualty two, chest seal right.",
      "Back to one, you've got the wrong leg on his card, it's the right."),
     {"c1 b tourniquet[right leg] = extremity", "c1 b tourniquet[right leg].time = 0940",
      "c1 b tourniquet[right leg].type = cat", "c2 e breathing[chest seal] = right"}),
    # a slot correction after a switch has nothing of this casualty's to restate: the other's entry stays his
    (("Casualty two, pressure dressing left calf.", "Back to one. Correction, right arm."),
     {"c2 e dressing[pressure] = left calf"}),
    # the medic putting another's report right
    (("Alpha says he got fentanyl.", "No, it was morphine, ten milligrams IV."),
     {"c1 f medication[morphine] = 10 mg", "c1 f medication[morphine].route = iv"}),
    (("Sats 91 no 94",), {"c1 c vitals[~1000].spo2 = 94%"}),
    # an entry taken back comes off the card (its note stays); only that drug, only that casualty's
    (("Gave ketamine fifty IM.", "Pulse 110.", "Scratch the ketamine from before, that was the other casualty."),
     {"c1 c vitals[~1000].pulse = 110"}),
    (("TXA 1 g IV at 0940.", "Ketamine 20 IV.", "Scratch the TXA."),
     {"c1 f medication[ketamine] = 20", "c1 f medication[ketamine].route = iv"}),
    (("TXA 1 g IV.", "Scratch the ketamine."), {"c1 f medication[txa] = 1 g", "c1 f medication[txa].route = iv"}),
    # a cue, then the last entry's item denied: taken back ("this one" is no dose of 1)
    (("TXA two grams IV at 0950.", "Scratch that, wrong guy, this one hasn't had TXA."), set()),
    (("TXA 1 g IV.", "Ketamine 50 IM.", "Scratch that, no TXA given."),
     {"c1 f medication[txa] = 1 g", "c1 f medication[txa].route = iv", "c1 f medication[ketamine] = 50",
      "c1 f medication[ketamine].route = im"}),
    (("Casualty one, morphine ten IV.", "Casualty two, TQ left leg.", "Back to one. That morphine was actually "
      "casualty two's."), {"c2 b tourniquet[left leg] = extremity"}),
    # a second voice: "No you didn't, that was morphine" keeps no slot of the fentanyl; "Doc, it's on his left arm"
    (("I gave him fentanyl, fifty IV.", "No you didn't, that was morphine."), {"c1 f medication[morphine] = yes"}),
    (("CAT on the right arm at 0955.", "Doc, it's on his left arm."),
     {"c1 b tourniquet[left arm] = extremity", "c1 b tourniquet[left arm].time = 0955",
      "c1 b tourniquet[left arm].type = cat"}),
    (("Casualty two, no wait, I'm still on one. Chest seal on the right.",), {"c1 e breathing[chest seal] = right"}),
    (("TQ left arm, actually right arm.",), {"c1 b tourniquet[right arm] = extremity"}),
    (("Morphine five IV, no, IM.",), {"c1 f medication[morphine] = 5", "c1 f medication[morphine].route = im"}),
    # done beside words like those above
    (("Bag of Hextend is spiked but it's not running yet. IV in the left hand.",),
     {"c1 e access[iv] = left hand"}),
    (("He only reacts to pain.",), {"c1 c vitals[~1000].avpu = p"}),
    (("Doc said give him TXA so I gave TXA 2 g IV.",),
     {"c1 f medication[txa] = 2 g", "c1 f medication[txa].route = iv"}),
    # slots
    (("Pushed ketamine IV, then at 0950, two grams TXA IV.",),
     {"c1 f medication[ketamine] = yes", "c1 f medication[ketamine].route = iv", "c1 f medication[txa] = 2 g",
      "c1 f medication[txa].route = iv", "c1 f medication[txa].time = 0950"}),
    (("Gave the Mobic, that's meloxicam.",), {"c1 f medication[meloxicam] = yes"}),
    (("Half a liter of LR through the IV.",),
     {"c1 e fluid[lactated ringer's] = 0.5 l", "c1 e fluid[lactated ringer's].route = iv"}),
    (("Splint's back on the left arm.",), {"c1 f splint = left arm"}),
    (("Morning report, zero six hundred. Pulse 88, sats 97.",),
     {"c1 c vitals[0600].pulse = 88", "c1 c vitals[0600].spo2 = 97%"}),
    # a retraction that names nothing takes back the last entry
    (("Ketamine 50 IM.", "Zofran four milligrams IV.", "Take that off his card, he threw up before it went in."),
     {"c1 f medication[ketamine] = 50", "c1 f medication[ketamine].route = im"}),
    # the medic's voice to the flight medic: a handover says again what the card holds, the entries already made,
    # given what is new
    (("CAT on the left thigh.", "TXA one gram IV.",
      "Handover to the flight medic: left leg CAT at zero nine forty, one gram of TXA IV, that's all he's had."),
     {"c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].type = cat",
      "c1 b tourniquet[left leg].time = 0940", "c1 f medication[txa] = 1 g", "c1 f medication[txa].route = iv"}),
    # a later check of the devices on the card is them, not more
    (("TQ right arm at 0910.", "Second TQ right arm at 0925.", "Both TQs still on, right arm, pulse 100."),
     {"c1 b tourniquet[right arm] = extremity", "c1 b tourniquet[right arm].time = 0910",
      "c1 b tourniquet[right arm#2] = extremity", "c1 b tourniquet[right arm#2].time = 0925",
      "c1 c vitals[~1000].pulse = 100"}),
    # a side corrected in an utterance of its own
    (("Lac on the left side of the forehead.", "Correction, right side."),
     {"c1 b injury[right forehead] = laceration"}),
    # a bare time heading the utterance is its readings' time, not the oxygen's
    (("Nine thirty, sats 95 on two liters of O2, resps 18.",),
     {"c1 c vitals[0930].spo2 = 95%", "c1 c vitals[0930].rr = 18", "c1 e breathing[o2] = yes"}),
    (("What's his pulse?", "One twenty-four, radial."),  # a reading, not 0124
     {"c1 c vitals[~1000].pulse = 124", "c1 c vitals[~1000].pulse_location = radial"}),
    # a question reported, answered in words and to the one who asked
    (("The PA is asking for a pressure.", "Ninety eight over sixty two, tell her."),
     {"c1 c vitals[~1000].bp = 98/62"}),
    (("Rate your pain for me, zero to ten?", "Like a six, Sergeant."), {"c1 c vitals[~1000].pain = 6"}),
    (("What are your last four?", "Three one one eight, Doc."), {"c1 a header.last_four = 3118"}),
    (("What are your last four?", "Ask my squad leader."), set()),
    (("The PA's asking for a systolic.", "Eighty five by cuff."), {"c1 c vitals[~1000].bp = 85/?"}),
    (("Any allergies?", "None known."), {"c1 a header.allergies = nka"}),
    (("Any allergies?", "Nope, none."), {"c1 a header.allergies = nka"}),
    (("Allergic to anything?", "Nah, nothing, Sergeant."), {"c1 a header.allergies = nka"}),
    (("Any allergies?", "Latex, that's all."), {"c1 a header.allergies = latex"}),
    # a drug named as the answer to "Any allergies?" is the allergen, never a dose given
    (("Allergic to anything?", "Codeine, it makes him itch."), {"c1 a header.allergies = codeine"}),
    (("Any allergies?", "Penicillin and morphine."), {"c1 a header.allergies = penicillin, morphine"}),
    (("Any allergies?", "Pushed morphine already."), {"c1 f medication[morphine] = yes"}),
    (("Allergies?", "Latex, and uh, he said iodine too."), {"c1 a header.allergies = latex, iodine"}),
    # a second tourniquet said higher up after the buddy's, with no limb, is on the limb of the buddy's
    (("Buddy's CAT is on the right thigh.", "Still bleeding past it, threw a second CAT on higher up."),
     {"c1 b tourniquet[right leg] = extremity", "c1 b tourniquet[right leg].type = cat",
      "c1 b tourniquet[right leg#2] = extremity", "c1 b tourniquet[right leg#2].type = cat"}),
    # the device on the card, timed in a later transcript: no second tourniquet
    (("TQ on his left leg.", "The TQ went on at 0941."),
     {"c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].time = 0941"}),
    (("The IV went in at 0941.",), {"c1 e access[iv] = yes", "c1 e access[iv].time = 0941"}),
    # the time of a treatment asked and answered: the treatment at that time; where it is on the card, that entry
    (("What time did his TQ go on?", "Oh nine thirty one, Doc, I checked my watch."),
     {"c1 b tourniquet[-] = yes", "c1 b tourniquet[-].time = 0931"}),
    (("CAT on his right arm.", "What time did the CAT go on?", "Oh nine thirty one."),
     {"c1 b tourniquet[right arm] = extremity", "c1 b tourniquet[right arm].type = cat",
      "c1 b tourniquet[right arm].time = 0931"}),
    (("When did the left tibia IO go in?", "Oh nine twenty."),
     {"c1 e access[io] = left tibia", "c1 e access[io].time = 0920"}),
    (("What time did his TQ go on?", "No idea, ask Ramos."), set()),
    (("What time did his TQ go on?", "Pulse is one ten."), {"c1 c vitals[~1000].pulse = 110"}),
    # a seal or a line done again with "a new one", its side in the clause after
    (("Chest seal slid off when we rolled him, new one on, right chest.",),
     {"c1 e breathing[chest seal] = right"}),
    # a time put right in the next utterance; of a dosed entry, only a number said as a clock is its time
    (("TXA went in at oh nine fifty.", "Correction, oh nine fifty five."),
     {"c1 f medication[txa] = yes", "c1 f medication[txa].time = 0955"}),
    (("TXA went in at 0950.", "Correction, 0955."), {"c1 f medication[txa] = yes", "c1 f medication[txa].time = 0955"}),
    (("Tylenol 500 mg PO at 0930.", "Correction, 1000."),
     {"c1 f medication[acetaminophen] = 1000 mg", "c1 f medication[acetaminophen].route = po",
      "c1 f medication[acetaminophen].time = 0930"}),
    # a second tourniquet said higher up, with no limb, is on the limb of the one before
    (("CAT on his left thigh.", "Still oozing, second CAT went on higher up."),
     {"c1 b tourniquet[left leg] = extremity", "c1 b tourniquet[left leg].type = cat",
      "c1 b tourniquet[left leg#2] = extremity", "c1 b tourniquet[left leg#2].type = cat"}),
    # readings after a time said in the sentence's head clause are timed by it
    (("Nine forty on Baker, pulse ninety, resps sixteen.",),
     {"c1 c vitals[0940].pulse = 90", "c1 c vitals[0940].rr = 16"}),
    (("Vitals in the truck at nine fifty, pulse eighty eight.",),
     {"c1 c vitals[0950].pulse = 88"}),
]


@pytest.mark.parametrize("heard", NOTHING_DONE)
def test_what_was_not_done_gives_nothing(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize(("said", "lines"), SAID)
def test_the_card_holds_what_was_said_last(card_stage: PluginHarness, said: tuple[str, ...],
                                           lines: set[str]) -> None:
    assert card_of(card_stage, *said) == lines
