"""The exports a receiving facility gets: JSON against its schema, a FHIR Bundle the library validates, a printed
card whose text is what was said, and a 9-line / MIST handover that fills only what was said."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from pypdf import PdfReader

from tcccd.card.exports.fhir_bundle import bundle
from tcccd.card.exports.handover import BLANK, handover, nine_line
from tcccd.card.exports.json_card import card_json, generated_schema, shipped_schema
from tcccd.card.exports.lines import text_card
from tcccd.card.exports.pdf_card import render
from tcccd.card.projection import Projector
from tcccd.kit.testing import PluginHarness
from tcccd.wire.card import CardSet
from tcccd.wire.card_events import Review
from tests.support.card_scenarios import CARD_PLUGIN, CardPipeline, scenarios

SCENARIOS = {s.name: s for s in scenarios()}
EXPORTED_TS = 1795520000.0
# FHIR R4/R4B required bindings for the codes the bundle sets (the library checks structure, not these values)
REQUIRED_CODES = {"Observation": {"registered", "preliminary", "final", "amended"},
                  "Procedure": {"preparation", "in-progress", "not-done", "on-hold", "stopped", "completed",
                                "entered-in-error", "unknown"},
                  "MedicationAdministration": {"in-progress", "not-done", "on-hold", "completed", "entered-in-error",
                                               "stopped", "unknown"},
                  "Encounter": {"planned", "arrived", "triaged", "in-progress", "onleave", "finished", "cancelled",
                                "entered-in-error", "unknown"}}


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardSet]:
    made = {}
    for name, scenario in SCENARIOS.items():
        with CardPipeline(tmp_path_factory.mktemp(name)) as pipeline:
            pipeline.run(scenario)
            made[name] = pipeline.projector.cards()
    return made


def test_the_schema_file_is_the_models_schema() -> None:
    assert shipped_schema() == generated_schema(), (
        "regenerate: python -m tcccd.card.exports.json_card > daemon/card/exports/card.schema.json")


def test_every_scenario_card_validates_against_the_schema_file(cards: dict[str, CardSet]) -> None:
    validator = jsonschema.Draft202012Validator(shipped_schema())
    for name, card_set in cards.items():
        document = json.loads(json.dumps(card_json(card_set)))
        assert list(validator.iter_errors(document)) == [], name


def test_the_schema_refuses_a_card_that_is_not_one(cards: dict[str, CardSet]) -> None:
    validator = jsonschema.Draft202012Validator(shipped_schema())
    document = card_json(cards["gsw_limb_tourniquet_txa"])
    entry = document["cards"][0]["b_injury"]["tourniquets"][0]
    entry["status"] = "probably"
    entry["event"]["what"]["limb"] = "third leg"
    document["cards"][0]["a_header"]["blood_type"] = "O+"
    messages = sorted(e.message for e in validator.iter_errors(document))
    assert any("probably" in m for m in messages) and any("third leg" in m for m in messages)
    assert any("blood_type" in m for m in messages)


def _resources(b: dict, kind: str) -> list[dict]:
    return [e["resource"] for e in b["entry"] if e["resource"]["resourceType"] == kind]


def test_fhir_bundle_holds_each_entry_with_its_codes_and_provenance(cards: dict[str, CardSet]) -> None:
    b = bundle(cards["gsw_limb_tourniquet_txa"], 0, EXPORTED_TS)
    assert b["type"] == "collection" and b["timestamp"] == "2026-11-24T11:33:20Z"
    [condition] = _resources(b, "Condition")
    assert condition["code"]["text"] == "gunshot wound" and condition["bodySite"] == [{"text": "left thigh"}]
    observations = _resources(b, "Observation")
    codes = sorted(o["code"].get("coding", [{"code": o["code"]["text"]}])[0]["code"] for o in observations)
    assert codes == ["2708-6", "72514-3", "85354-9", "8867-4", "8867-4", "9279-1", "AVPU",
                     "litter or ambulatory (9-line, line 5)"]
    [avpu] = [o for o in observations if o["code"] == {"text": "AVPU"}]
    assert avpu["code"] == {"text": "AVPU"} and avpu["valueCodeableConcept"] == {"text": "Alert"}
    [bp] = [o for o in observations if "coding" in o["code"] and o["code"]["coding"][0]["code"] == "85354-9"]
    assert [(c["code"]["coding"][0]["code"], c["valueQuantity"]["value"]) for c in bp["component"]] == [
        ("8480-6", 110), ("8462-4", 70)]
    assert bp["effectiveDateTime"] == "2026-11-24T09:21:00Z"
    [txa] = [m for m in _resources(b, "MedicationAdministration") if m["medicationCodeableConcept"]["text"] == "TXA"]
    assert txa["dosage"] == {"dose": {"value": 1.0, "unit": "g", "system": "http://unitsofmeasure.org", "code": "g"},
                             "route": {"text": "IV"}}
    assert txa["effectiveDateTime"] == "2026-11-24T09:15:00Z"
    [tq] = [p for p in _resources(b, "Procedure") if p["code"]["text"].startswith("tourniquet")]
    assert tq["bodySite"] == [{"text": "left leg"}] and tq["performedDateTime"] == "2026-11-24T09:12:00Z"


def test_a_time_nobody_said_is_not_written_as_the_time_of_the_act(cards: dict[str, CardSet]) -> None:
    b = bundle(cards["gsw_limb_tourniquet_txa"], 0, EXPORTED_TS)
    [fentanyl] = [m for m in _resources(b, "MedicationAdministration")
                  if m["medicationCodeableConcept"]["text"] == "fentanyl"]
    assert "effectiveDateTime" not in fentanyl
    assert fentanyl["effectivePeriod"]["extension"][0]["valueCode"] == "unknown"
    [access] = [p for p in _resources(b, "Procedure") if p["code"]["text"] == "IV access"]
    assert "performedDateTime" not in access


def test_every_resource_has_a_provenance_with_the_words_it_came_from(cards: dict[str, CardSet]) -> None:
    for name, card_set in cards.items():
        b = bundle(card_set, 60, EXPORTED_TS)
        provenances = _resources(b, "Provenance")
        others = [e["fullUrl"] for e in b["entry"] if e["resource"]["resourceType"] != "Provenance"]
        assert sorted(p["target"][0]["reference"] for p in provenances) == sorted(others), name
        for resource in (e["resource"] for e in b["entry"]):
            kind = resource["resourceType"]
            if kind in REQUIRED_CODES:
                assert resource["status"] in REQUIRED_CODES[kind], (name, resource)
        said = [p["entity"][0]["what"]["display"] for p in provenances if "entity" in p]
        assert all(re.match(r'said ".+" \(text \d+-\d+\)', d) for d in said), name
        assert bundle(card_set, 60, EXPORTED_TS) == b, "the same log must give the same bundle"


def test_unconfirmed_entries_are_preliminary_and_unconfirmed_in_fhir(cards: dict[str, CardSet]) -> None:
    b = bundle(cards["negations_corrections"], 0, EXPORTED_TS)
    [wild] = [o for o in _resources(b, "Observation") if o.get("valueQuantity", {}).get("value") == 700]
    assert wild["status"] == "preliminary"
    tq_notes = [p for p in _resources(b, "Procedure") if "tourniquet" in p["code"]["text"]]
    assert tq_notes == []  # "No tourniquet needed" is a note, never a procedure


def test_the_printed_card_says_what_was_said_and_nothing_else(cards: dict[str, CardSet], tmp_path: Path) -> None:
    path = render(cards["blast_two_casualties"], tmp_path / "card.pdf")
    pages = [" ".join(page.extract_text().split()) for page in PdfReader(path).pages]
    assert len(pages) == 2
    first, second = pages
    assert "CASUALTY 1" in first and "CASUALTY 2" in second
    for said in ("IED", "right lower leg: amputation", "TQ RIGHT LEG: 0958", "TQ LEFT LEG: 0958", "140",
                 "90/50", "ketamine 50 mg IM", "URGENT"):
        assert said in first, said
    for said in ("right arm: shrapnel wound", "face: shrapnel wound", "pressure dressing: right arm", "120/80",
                 "PRIORITY", "LITTER / AMBULATORY: ambulatory"):
        assert said in second, said
    assert "ketamine" not in second and "NAME: ____" in first
    path = render(cards["negations_corrections"], tmp_path / "neg.pdf")
    text = " ".join(PdfReader(path).pages[0].extract_text().split())
    assert "? 700" in text and "? other: TXA 1 g IV" in text and "Note: No tourniquet needed" in text


def test_nine_line_fills_only_precedence_and_type_and_marks_the_rest(cards: dict[str, CardSet]) -> None:
    text = nine_line(cards["gsw_chest_blood_next_patient"])
    lines = text.splitlines()[1:]
    assert lines[2] == "Line 3. Number of patients by precedence: B - 1 urgent surgical; D - 1 routine"
    assert lines[4] == "Line 5. Number of patients by type: L - 1; A - 1"
    assert all(line.endswith(BLANK) for i, line in enumerate(lines) if i not in (2, 4))
    partial = nine_line(cards["blast_two_casualties"]).splitlines()
    assert partial[5] == "Line 5. Number of patients by type: A - 1; type not said for casualty 1 [medic to fill]"
    assert nine_line(CardSet()).count(BLANK) == 9


def test_mist_reads_each_casualty_and_leaves_unsaid_lines_blank(cards: dict[str, CardSet]) -> None:
    text = handover(cards["tension_pneumothorax"])
    assert "M - Mechanism: MVC, blunt" in text
    assert "I - Injuries: chest: blunt trauma; right chest: puncture wound" in text
    assert "Pulse (rate, location) 110 (1140)" in text and "Blood pressure 100/60 (1145)" in text
    assert "Breathing: needle decompression, right, 1132" in text
    junctional = handover(cards["junctional_airway_relative"])
    assert f"M - Mechanism: {BLANK}" in junctional


def test_text_card_lists_sections_in_the_forms_order(cards: dict[str, CardSet]) -> None:
    [card] = cards["burn_fluids"].cards
    text = text_card(card)
    assert [line[0] for line in text.splitlines() if re.match(r"[A-H]  ", line)] == list("ABCEFGH")
    assert "Fluid: lactated Ringer's 500 mL IO 1210" in text and "Burns: 30% TBSA" in text
    assert "G  Notes\n   (blank)" in text


def test_a_resource_that_breaks_fhir_structure_is_refused_by_the_library(cards: dict[str, CardSet],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundle is validated by fhir.resources, not only assembled: a body site that is not a CodeableConcept
    list (as a careless change to the exporter could write) fails the export loudly."""
    from pydantic import ValidationError

    from tcccd.card.exports import fhir_resources

    original = fhir_resources.condition
    monkeypatch.setattr(fhir_resources, "condition", lambda e, refs: {**original(e, refs), "bodySite": "left thigh"})
    with pytest.raises(ValidationError, match="bodySite"):
        bundle(cards["gsw_limb_tourniquet_txa"], 0, EXPORTED_TS)


def _vital_signs_profile_problems(observation: dict) -> list[str]:
    """FHIR's vital-signs profile (R4B vitalsigns, heartrate, resprate, oxygensat, bp) for the rules the library does
    not check: category, an effective time, LOINC codes, UCUM units, each BP component valued or said absent."""
    problems = []
    if {"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"} not in \
            observation["category"][0]["coding"]:
        problems.append("category")
    if "effectiveDateTime" not in observation:
        problems.append("effective[x]")
    codes = {c["code"] for c in observation["code"]["coding"] if c["system"] == "http://loinc.org"}
    profile = observation["meta"]["profile"][0].rsplit("/", 1)[1]
    required = {"heartrate": "8867-4", "resprate": "9279-1", "oxygensat": "2708-6", "bp": "85354-9"}[profile]
    if required not in codes:
        problems.append(f"code {required}")
    quantities = [observation.get("valueQuantity")] + [c.get("valueQuantity") for c in observation.get("component", [])]
    if any(q is not None and q["system"] != "http://unitsofmeasure.org" for q in quantities):
        problems.append("UCUM")
    if profile == "bp":
        parts = {c["code"]["coding"][0]["code"]: c for c in observation["component"]}
        if set(parts) != {"8480-6", "8462-4"} or any(("valueQuantity" in c) == ("dataAbsentReason" in c)
                                                      for c in parts.values()):
            problems.append("bp components")
    return problems


def test_vital_signs_meet_the_fhir_vital_signs_profile_with_the_utterance_clock_when_no_time_was_said(
        tmp_path: Path) -> None:
    from tests.support.card_said import Medic

    with PluginHarness(CARD_PLUGIN, {}, tmp_path) as harness:
        medic = Medic(harness)
        medic.says("Pulse one twenty, resp twenty two, sats ninety one on room air, BP palp eighty.")
        medic.says("At zero nine forty, BP one ten over seventy.")
        b = bundle(medic.projector.cards(), 0, EXPORTED_TS)
    vitals = [o for o in _resources(b, "Observation") if "meta" in o]
    assert len(vitals) == 5 and all(_vital_signs_profile_problems(o) == [] for o in vitals)
    [spo2] = [o for o in vitals if o["meta"]["profile"][0].endswith("oxygensat")]
    assert [c["code"] for c in spo2["code"]["coding"]] == ["2708-6", "59408-5"]
    assert spo2["effectiveDateTime"] == "2026-11-26T10:00:10Z"  # no time said: the utterance's clock
    measured, palpated = sorted((o for o in vitals if o["meta"]["profile"][0].endswith("/bp")),
                                key=lambda o: o["effectiveDateTime"])
    assert measured["effectiveDateTime"] == "2026-11-26T09:40:00Z"
    assert palpated["component"][1]["dataAbsentReason"]["coding"][0]["code"] == "not-performed"
    assert palpated["component"][0]["valueQuantity"]["value"] == 80


def test_an_unconfirmed_treatment_is_never_completed(tmp_path: Path) -> None:
    from tests.support.card_said import Medic

    with PluginHarness(CARD_PLUGIN, {}, tmp_path) as harness:
        medic = Medic(harness)
        medic.says("Give 1 g TXA at 0920.", ["Give"])
        medic.says("Needle decompression right chest.", ["Needle"])
        medic.says("Fentanyl fifty to one hundred micrograms IV.")
        medic.says("Ketamine fifty milligrams IM.")
        cards = medic.projector.cards()
        b = bundle(cards, 0, EXPORTED_TS)
    given = {m["medicationCodeableConcept"]["text"]: m for m in _resources(b, "MedicationAdministration")}
    [needle] = _resources(b, "Procedure")
    for doubted in (given["TXA"], given["fentanyl"], needle):
        assert doubted["status"] == "unknown", doubted
        reason = doubted["statusReason"][0]["text"] if isinstance(doubted["statusReason"], list) else \
            doubted["statusReason"]["text"]
        assert reason.startswith("unconfirmed: ") and "awaiting the medic's confirmation" in reason
    assert "Give 1 g TXA at 0920" in given["TXA"]["statusReason"][0]["text"]
    assert given["fentanyl"]["dosage"] == {"text": "50 to 100 mcg", "route": {"text": "IV"}}  # never one end
    assert given["ketamine"]["status"] == "completed"
    txa = next(e for e in cards.cards[0].f_medications.medications if e.event.what.name == "TXA")
    reviewed = Projector()
    for event in (e.event for card in cards.cards for e in [*card.f_medications.medications,
                                                            *card.e_treatments.breathing]):
        reviewed.apply(event)
    reviewed.review(Review(event=txa.event.id, action="confirm", ts=EXPORTED_TS, by="medic"))
    [confirmed] = [m for m in _resources(bundle(reviewed.cards(), 0, EXPORTED_TS), "MedicationAdministration")
                   if m["medicationCodeableConcept"]["text"] == "TXA"]
    assert confirmed["status"] == "completed" and "statusReason" not in confirmed


def test_allergies_burns_litter_and_the_first_responder_are_in_the_bundle(cards: dict[str, CardSet]) -> None:
    [nka] = _resources(bundle(cards["negations_corrections"], 0, EXPORTED_TS), "AllergyIntolerance")
    assert nka["code"]["coding"] == [{"system": "http://snomed.info/sct", "code": "716186003",
                                      "display": "No known allergy (situation)"}]
    assert nka["clinicalStatus"]["coding"][0]["code"] == "active"
    burns = bundle(cards["burn_fluids"], 0, EXPORTED_TS)
    [tbsa] = [o for o in _resources(burns, "Observation") if o["code"].get("text", "").startswith("burned")]
    assert tbsa["valueQuantity"] == {"value": 30.0, "unit": "%", "system": "http://unitsofmeasure.org", "code": "%"}
    b = bundle(cards["gsw_chest_blood_next_patient"], 0, EXPORTED_TS)
    mobility = [o["valueCodeableConcept"]["text"] for o in _resources(b, "Observation")
                if o["code"].get("text", "").startswith("litter or ambulatory")]
    assert sorted(mobility) == ["ambulatory", "litter"]
    [encounter_one, encounter_two] = _resources(b, "Encounter")
    assert {encounter_one["priority"]["text"], encounter_two["priority"]["text"]} == {
        "evacuation category: urgent surgical", "evacuation category: routine"}
    [responder] = _resources(b, "Practitioner")
    assert responder["name"][0]["text"] == "Diaz" and responder["identifier"][0]["value"] == "5567"
    url = next(e["fullUrl"] for e in b["entry"] if e["resource"]["resourceType"] == "Practitioner")
    treated_by = [p for p in _resources(b, "Procedure") if p.get("performer")]
    assert treated_by and all(p["performer"][0]["actor"]["reference"] == url for p in treated_by)
    authored = [p for p in _resources(b, "Provenance") if any(a["who"].get("reference") == url for a in p["agent"])]
    assert authored and all(a["type"]["coding"][0]["code"] in ("assembler", "author")
                            for p in authored for a in p["agent"])


def test_allergens_are_one_allergy_intolerance_each_and_no_drug_given(tmp_path: Path) -> None:
    from tests.support.card_said import Medic

    with PluginHarness(CARD_PLUGIN, {}, tmp_path) as harness:
        medic = Medic(harness)
        medic.says("Allergic to morphine and penicillin, NKDA otherwise.")
        b = bundle(medic.projector.cards(), 0, EXPORTED_TS)
    assert sorted(a["code"]["text"] for a in _resources(b, "AllergyIntolerance")) == ["morphine", "penicillin"]
    assert _resources(b, "MedicationAdministration") == []
