"""The card's rules in the order they run, each with the words without which it cannot find anything.

A dictation of 500 words is hundreds of short sentences; running every rule's
patterns over each costs more than the rules' own work. Each rule is gated by
its words (the first word of every form its lexicon table holds, and its cue
words): a sentence holding none of them is not given to that rule. A gate is a
superset of what the rule reads, built from the same tables, so it changes no
finding, only the time spent (tests/plugins/card/test_rule_table.py checks both).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from tcccd.plugins.card import lexicon as lx
from tcccd.plugins.card import rules_given, rules_header, rules_hemorrhage, rules_injury, rules_treatments, rules_vitals
from tcccd.plugins.card.finding import Finding
from tcccd.plugins.card.phrases import phrase_words
from tcccd.plugins.card.sentences import Sentence

Rule = Callable[[Sentence], Iterator[Finding]]


def _first_words(*forms: Iterable[str]) -> frozenset[str]:
    return frozenset(said[0] for group in forms for form in group if (said := phrase_words(form)))


RULES: tuple[tuple[Rule, frozenset[str]], ...] = (
    (rules_header.evacuation, _first_words(lx.EVAC_CATEGORIES, lx.MOBILITY, ["walk", "walking"])),
    (rules_header.last_four, _first_words(["last"])),
    (rules_header.battle_roster, _first_words(["battle", "roster", "zap"])),
    (rules_header.allergies, _first_words(["allergic", "allergy", "allergies", "nka", "nkda", "anaphylaxis",
                                           "reaction", "sensitive", "reacts", "reacted", "denies"])),
    (rules_header.responder, _first_words(["responder", "treated", "first"])),
    (rules_header.notes, _first_words(["note"])),
    (rules_injury.mechanisms, _first_words(lx.MECHANISMS, lx.FALL_WORDS)),
    (rules_injury.injuries, _first_words(lx.INJURIES)),
    (rules_injury.burn_extent, _first_words(["burn", "burns", "burned", "tbsa", "body"])),
    (rules_hemorrhage.tourniquets, _first_words(lx.TOURNIQUET_WORDS, lx.TOURNIQUET_DEVICES)),
    (rules_hemorrhage.dressings, _first_words(lx.HEMOSTATIC, lx.PRESSURE)),
    (rules_treatments.airway, _first_words(lx.AIRWAY)),
    (rules_treatments.breathing, _first_words(lx.BREATHING)),
    (rules_given.access, _first_words(lx.ACCESS, ["line", "gauge", "g"])),
    (rules_given.fluids, _first_words(lx.FLUIDS)),
    (rules_given.medications, _first_words(lx.MEDICATIONS)),
    (rules_vitals.pulses, _first_words(lx.PULSE_WORDS, lx.PULSE_SITES)),
    (rules_vitals.blood_pressures, _first_words(lx.BP_WORDS, ["systolic", "palp", "palpation", "palpated",
                                                              "pressure"])),
    (rules_vitals.respiratory_rates, _first_words(lx.RR_WORDS, ["breaths"])),
    (rules_vitals.saturations, _first_words(lx.SPO2_WORDS)),
    (rules_vitals.avpu, _first_words(lx.AVPU, ["respond", "responds", "responding", "react", "reacts", "reacting",
                                                "withdraw", "withdraws", "withdrawing", "moan", "moans", "moaning",
                                                "groan", "groans", "groaning", "grimaces", "grimacing", "flinch",
                                                "flinches", "flinching", "localizes", "localizing", "opens", "open",
                                                "pull", "pulls", "pulling", "mumble", "mumbles", "grimace", "a", "an",
                                                "squeezes",
                                                "squeeze", "answers", "answer"])),
    (rules_vitals.pain, _first_words(["pain", "out"])),
    (rules_treatments.hypothermia, _first_words(lx.HYPOTHERMIA)),
    (rules_treatments.eye_shields, _first_words(["eye", "rigid"])),
    (rules_treatments.splints, _first_words(["splint", "splints", "splinted", "splinting"])),
    (rules_treatments.pill_pack, _first_words(lx.PILL_PACK)),
)


def _rules_of(rules: tuple[tuple[Rule, frozenset[str]], ...]) -> dict[str, tuple[int, ...]]:
    """Each gate word: the rules (their places in the table) it lets through."""
    places: dict[str, list[int]] = {}
    for place, (_, gate) in enumerate(rules):
        for word in gate:
            places.setdefault(word, []).append(place)
    return {word: tuple(found) for word, found in places.items()}


_RULES_OF = _rules_of(RULES)


def findings(s: Sentence, said: frozenset[str]) -> list[Finding]:
    """Every rule's findings in the sentence whose words are `said`, in the rules' order: the rules are looked up by
    the words said (a handful), not each gate searched for them."""
    found: list[Finding] = []
    for place in sorted({place for word in said for place in _RULES_OF.get(word, ())}):
        found += RULES[place][0](s)
    return found
