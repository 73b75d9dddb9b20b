"""Assertion before extraction: only what was said as done or observed, for this casualty, is a positive field.

One test per class of assertion, with sentences written for these tests (not the corpus's): each class must leave
no positive field where the medic did not say the thing was done, and the done sentence beside it must still give
its field (so that a test cannot pass by the card reading nothing). The notes kept for absent, failed, removed and
withheld mentions are checked too: nothing said is lost silently.
"""

from __future__ import annotations

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_said import Medic, card_of


@pytest.mark.parametrize("heard", [
    "No TXA given.", "He didn't get any ketamine.", "TQ wasn't applied.", "Never got the NPA in.",
    "Haven't pushed the morphine.", "We don't have a chest seal on him.", "Tourniquet not required.",
    "Couldn't find a radial pulse."])
def test_absent_and_contractions_leave_a_note_and_no_field(card_stage: PluginHarness, heard: str) -> None:
    medic = Medic(card_stage)
    result = medic.says(heard)
    assert medic.fields() == set()
    assert [e.assertion for e in result.events] == ["absent"] and medic.notes()


@pytest.mark.parametrize("heard", [
    "Did he get his TXA?", "Has he had any fentanyl", "What's his pulse?", "Is the tourniquet on the left leg?",
    "Asking if we gave him ketamine."])
def test_a_question_is_not_an_answer(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize("heard", [
    "Going to give him a gram of TXA.", "Let's push ketamine fifty IM.", "Give him TXA.", "I'll put a chest seal on.",
    "Consider needle decompression on the right.", "Plan to start an IO in the sternum.", "Prep the whole blood.",
    "We should get a tourniquet on that leg."])
def test_a_plan_or_an_order_is_not_a_treatment_given(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize("heard", [
    "He needs a chest seal.", "Can I get a TQ over here?", "Plasma is on the way.", "Requesting whole blood.",
    "Hand me the combat gauze."])
def test_a_need_or_a_request_is_not_a_treatment_given(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize("heard", [
    "If his pressure drops, give TXA.", "TXA if he keeps bleeding.", "Keep sats above ninety.",
    "Target systolic of ninety.", "When the line is in, hang the plasma.", "Morphine as needed for pain."])
def test_a_condition_or_a_target_is_not_a_reading_or_a_treatment(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize("heard, kept", [
    ("Tried an IO, it didn't take.", "failed"), ("Missed the IV in the left arm.", "failed"),
    ("IV attempt unsuccessful.", "failed"), ("Took the tourniquet off.", "removed"), ("NPA removed.", "removed"),
    ("Holding the ketamine, he's hypotensive.", "withheld"), ("Skipped the morphine.", "withheld"),
    ("Ketamine contraindicated.", "withheld")])
def test_failed_removed_and_withheld_are_notes_not_fields(card_stage: PluginHarness, heard: str, kept: str) -> None:
    medic = Medic(card_stage)
    result = medic.says(heard)
    assert medic.fields() == set()
    assert [e.assertion for e in result.events] == [kept] and all(e.negated for e in result.events)


def test_a_conversion_removes_the_tourniquet_and_records_the_dressing(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Converted the TQ to a pressure dressing on the right thigh.") == {
        "c1 e dressing[pressure] = right thigh"}


@pytest.mark.parametrize("heard", [
    "Next dose of TXA at ten thirty.", "Recheck BP in fifteen minutes.", "Redose ketamine at eleven hundred.",
    "Reassess the tourniquet at ten forty.", "TXA will be given at eleven hundred.", "Morphine should be given.",
    "Second gram of TXA to be given at eleven hundred.", "TXA is due to be given at eleven hundred.",
    "The chest seal will be placed.", "TXA gets given at eleven hundred.",
    "Have the second gram of TXA given at eleven hundred."])
def test_a_scheduled_act_is_not_done_and_its_time_is_not_a_field(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize("heard, field, ahead_min", [
    ("Tourniquet applied to the left leg at eleven hundred.", "c1 b tourniquet[left leg].time = 1100 (unconfirmed)",
     60),
    ("TXA given at twenty one thirty.", "c1 f medication[txa].time = 2130 (unconfirmed)", 690),
    ("Tourniquet went on the left leg at eleven hundred.", "c1 b tourniquet[left leg].time = 1100 (unconfirmed)", 60),
    ("He has been given morphine at eleven hundred.", "c1 f medication[morphine].time = 1100 (unconfirmed)", 60)])
def test_an_act_said_as_over_with_a_time_ahead_of_the_clock_is_kept_unconfirmed_and_reported(
        card_stage: PluginHarness, heard: str, field: str, ahead_min: int) -> None:
    """Said at 10:00: the medic's watch and the kit's clock disagree; the act was done all the same, and the
    reply says how far ahead of the clock it was said (the daemon tells the operator)."""
    medic = Medic(card_stage)
    result = medic.says(heard)
    assert field in medic.fields()
    assert [(e.assertion, e.uncertain) for e in result.events] == [("done", True)]
    assert result.clock_ahead is not None and result.clock_ahead.clock_hhmm == "1000"
    assert (result.clock_ahead.said_hhmm, result.clock_ahead.ahead_min) == (field.split()[-2], ahead_min)


@pytest.mark.parametrize("heard", [
    "TXA second gram at eleven hundred.", "Tourniquet applied to the left leg at zero nine twelve.",
    "Ketamine fifty IM, redose at ten thirty.", "Pulse one twenty at ten twenty."])
def test_a_plan_a_past_time_or_a_reading_says_nothing_of_the_clock(card_stage: PluginHarness, heard: str) -> None:
    assert Medic(card_stage).says(heard).clock_ahead is None


def test_an_allergy_is_an_allergy_not_a_drug_given(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Allergic to ketamine and latex.") == {"c1 a header.allergies = ketamine, latex"}
    assert card_of(card_stage, "Morphine allergy.") == {"c1 a header.allergies = morphine"}
    assert card_of(card_stage, "No known drug allergies.") == {"c1 a header.allergies = nka"}
    assert card_of(card_stage, "Allergic to fentanyl, NKDA otherwise.") == {"c1 a header.allergies = fentanyl"}


@pytest.mark.parametrize("heard", [
    "The guy next to him has a chest seal.", "Their medic gave their guy morphine.",
    "He'd need a cric if it swells.", "Might need whole blood later.", "History of a chest tube on the left.",
    "He had a tourniquet on his last deployment.", "The interpreter got hit too, frag in his back.",
    "Checked the driver too, he's got a pulse of one ten, he's not a casualty.",
    "Gave the MWD some ketamine, the dog's calmer now."])
def test_someone_else_hypothetical_and_history_give_nothing(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


def test_what_was_done_beside_what_was_not_is_kept(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "TQ on the right arm, going to give TXA.") == {
        "c1 b tourniquet[right arm] = extremity"}
    assert card_of(card_stage, "Missed the IV, IO in the left tibia.") == {"c1 e access[io] = left tibia"}
    assert card_of(card_stage, "Held pressure, then packed it with Combat Gauze.") == {
        "c1 e dressing[hemostatic] = yes", "c1 e dressing[hemostatic].product = combat gauze"}
    assert card_of(card_stage, "Airway intact, no chest seal needed.") == {"c1 e airway[intact] = yes"}


def test_a_negation_reaches_a_list_but_not_the_next_statement(card_stage: PluginHarness) -> None:
    medic = Medic(card_stage)
    result = medic.says("No TXA, ketamine or morphine.")
    assert medic.fields() == set() and [e.assertion for e in result.events] == ["absent"] * 3
    assert card_of(card_stage, "Not urgent, routine.") == {"c1 a header.evac_category = routine"}


def test_a_status_hanging_on_a_doubted_word_is_shown_unconfirmed(card_stage: PluginHarness) -> None:
    """'Give' doubted may have been 'Gave': kept, unconfirmed; 'Gave' doubted: unconfirmed too; a doubted word
    that has no done sound-alike leaves the status as said."""
    assert card_of(card_stage, ("Give TXA one gram.", ["Give"])) == {
        "c1 f medication[txa] = 1 g (unconfirmed)"}
    assert card_of(card_stage, ("Gave TXA one gram.", ["Gave"])) == {
        "c1 f medication[txa] = 1 g (unconfirmed)"}
    assert card_of(card_stage, "Give TXA one gram.") == set()
    assert card_of(card_stage, ("Holding the ketamine.", ["Holding"])) == set()


def test_everyday_talk_about_kit_and_training_gives_nothing(card_stage: PluginHarness) -> None:
    for heard in ("Two chest seals left in my aid bag.", "TXA goes within three hours, remember that.",
                  "Normal saline is in the truck box.", "Expect mortar fire tonight.",
                  "Evac categories are urgent, priority and routine."):
        assert card_of(card_stage, heard) == set(), heard


@pytest.mark.parametrize("heard", [
    "TXA: not given.", "TXA - no.", "Negative on the TXA.", "Zero TXA so far.", "TQ unnecessary.",
    "Nobody put a chest seal on him.", "Ketamine: not yet."])
def test_a_status_said_after_the_thing_or_a_quantity_of_none_is_not_done(card_stage: PluginHarness,
                                                                         heard: str) -> None:
    assert card_of(card_stage, heard) == set()


def test_a_colon_before_a_reading_still_ends_the_clause_and_zero_in_a_number_is_a_digit(
        card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "TXA no, ketamine yes.") == {"c1 f medication[ketamine] = yes"}
    assert card_of(card_stage, "Interventions: TQ left leg.") == {"c1 b tourniquet[left leg] = extremity"}
    assert card_of(card_stage, "Last four zero nine one two.") == {"c1 a header.last_four = 0912"}
    assert card_of(card_stage, "Pain zero.") == {"c1 c vitals[~1000].pain = 0"}


@pytest.mark.parametrize("heard", [
    "Nice TQ.", "Good job on that tourniquet.", "Ketamine's in my left cargo pocket.",
    "The chest seal packaging is torn.", "Morphine makes him nauseous."])
def test_praise_where_kit_is_and_what_a_drug_does_are_no_act(card_stage: PluginHarness, heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize(("heard", "kept"), [
    ("Chest seal on the left, the needle D is next.", "c1 e breathing[chest seal] = left"),
    ("IV in the left arm, the fluids can wait until we land.", "c1 e access[iv] = left arm"),
    ("Fentanyl was considered, ketamine fifty given.", "c1 f medication[ketamine] = 50"),
    ("Pulse ninety after the morphine.", "c1 c vitals[~1000].pulse = 90"),
    ("His gunner has the leg wound, this one took frag to the left hand.", "c1 b injury[left hand] = shrapnel wound"),
    ("The last guy got the TXA, he got the pill pack.", "c1 f pill_pack = yes"),
    ("Could be a hemothorax, pulse ox eighty nine.", "c1 c vitals[~1000].spo2 = 89%"),
])
def test_a_next_act_a_wait_a_drug_named_as_a_time_a_teammate_and_a_differential_are_not_done(
        card_stage: PluginHarness, heard: str, kept: str) -> None:
    """'X is next', 'can wait', 'was considered', 'after the morphine', 'his gunner has', 'the last guy', 'could be'
    put nothing of theirs on the card; the done thing said beside each stays."""
    assert card_of(card_stage, heard) == {kept}


def test_a_drug_named_as_a_time_reaches_only_that_drug(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Narcan point four IN after the fentanyl dropped his resps to eight.") == {
        "c1 f medication[naloxone] = 0.4", "c1 f medication[naloxone].route = in", "c1 c vitals[~1000].rr = 8"}


@pytest.mark.parametrize("heard", [
    "That's my last chest seal, somebody restock me.", "I'm down to two tourniquets and one NPA.",
    "The IV won't flush, pulling it.", "Went for the IO, the driver bent the needle.",
    "Cut the tourniquet off to check the wound, it's still off.", "TXA's a no-go, he's past three hours.",
    "My other patient is the one with the chest seal.", "Ketamine is wearing off, he's hurting.",
    "um lets hang the whole blood and then push the calcium"])
def test_kit_talk_attempts_removals_and_proposals_said_loosely_give_nothing(card_stage: PluginHarness,
                                                                            heard: str) -> None:
    assert card_of(card_stage, heard) == set()


@pytest.mark.parametrize("heard, lines", [
    ("TQ right leg at 0850, converted at 0935 to a pressure dressing.", {"c1 e dressing[pressure] = yes"}),
    ("Saline lock in the right hand, it infiltrated.", set()),
    ("NPA in the right nare, pulled it.", set()),
    ("Ketamine 20 IV, holding the next dose.",
     {"c1 f medication[ketamine] = 20", "c1 f medication[ketamine].route = iv"}),
    ("Chest seal on the left, burped it twice.", {"c1 e breathing[chest seal] = left"})])
def test_what_came_to_a_thing_said_in_a_clause_after_it(card_stage: PluginHarness, heard: str,
                                                         lines: set[str]) -> None:
    """A removal, a failure or a hold said alone after the thing's own clause is about that thing; one that names
    something else ("the next dose") is not."""
    assert card_of(card_stage, heard) == lines


@pytest.mark.parametrize("heard", [
    "The bird is bringing two units of plasma.", "Should his pressure drop under eighty, I'm going straight to blood.",
    "Doc from third squad packed the wound on his own guy.", "Ketamine is fine for him, he's not allergic.",
    "Getting him on O2 now."])
def test_deliveries_inverted_conditions_other_units_and_permissions_give_nothing(card_stage: PluginHarness,
                                                                                 heard: str) -> None:
    assert card_of(card_stage, heard) == set()


def test_a_drug_given_with_a_unit_of_blood_names_the_blood_only_as_when(card_stage: PluginHarness) -> None:
    assert card_of(card_stage, "Calcium 1 g IV with the second unit of whole blood.") == {
        "c1 f medication[calcium] = 1 g", "c1 f medication[calcium].route = iv"}
