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
from tcccd.wire.card import CardSet
from tests.support.card_scenarios import CardPipeline, scenarios

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
    codes = sorted(o["code"].get("coding", [{"code": "none"}])[0]["code"] for o in observations)
    assert codes == ["59408-5", "72514-3", "85354-9", "8867-4", "8867-4", "9279-1", "none"]
    [avpu] = [o for o in observations if "coding" not in o["code"]]
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
