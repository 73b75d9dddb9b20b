"""The card's header and section H as FHIR resources: allergies, burn extent, litter or ambulatory, first responder.

- Allergies: one AllergyIntolerance per allergen said, its words as the code's
  text; "no known allergies" as one AllergyIntolerance coded SNOMED CT
  716186003 "No known allergy (situation)" (as the International Patient Summary
  and FHIR's own examples write it). clinicalStatus active (FHIR requires it
  unless the entry is in error); verificationStatus only when the card says
  (unconfirmed, or confirmed by the medic).
- Burn extent: an Observation, category exam, valued in % (UCUM), the medic's
  words as its code text: no LOINC code for burned body surface area was
  checked here, so none is claimed.
- Litter or ambulatory (the 9-line's line 5): an Observation, category exam,
  its value the word said. The evacuation category stays the Encounter's
  priority (tcccd.card.exports.fhir_bundle).
- First responder: a Practitioner (the name said, the last four as an
  identifier), named as the performer of the casualty's treatments and as a
  Provenance agent beside the card stage.
"""

from __future__ import annotations

from typing import Any

from tcccd.card.exports.fhir_resources import UCUM, instant, text
from tcccd.wire.card import Card, Entry

SNOMED = "http://snomed.info/sct"
NO_KNOWN_ALLERGY = {"system": SNOMED, "code": "716186003", "display": "No known allergy (situation)"}
EXAM = [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "exam"}]}]
LAST_FOUR = "urn:tcccd:ssn-last-four"


def allergies(entry: Entry, refs: dict[str, Any], utc_offset_min: int) -> list[dict[str, Any]]:
    said = entry.event.what.allergies or ""
    base: dict[str, Any] = {
        "resourceType": "AllergyIntolerance", "patient": refs["subject"], "encounter": refs["encounter"],
        "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical",
                                       "code": "active"}]},
        "recordedDate": instant(entry.event.time.logged_ts, utc_offset_min)}
    status = {"unconfirmed": "unconfirmed", "confirmed": "confirmed"}.get(entry.status)
    if status:
        base["verificationStatus"] = {"coding": [{
            "system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", "code": status}]}
    if said == "NKA":
        return [{**base, "code": {"coding": [NO_KNOWN_ALLERGY], "text": "NKA"}}]
    return [{**base, "code": text(allergen)} for allergen in said.split(", ") if allergen]


def burn_extent(entry: Entry, refs: dict[str, Any], utc_offset_min: int) -> dict[str, Any]:
    return {"resourceType": "Observation", "status": _observed(entry), "category": EXAM,
            "code": text("burned body surface area (% TBSA)"), **refs,
            "effectiveDateTime": instant(entry.event.time.logged_ts, utc_offset_min),
            "valueQuantity": {"value": entry.event.what.percent, "unit": "%", "system": UCUM, "code": "%"}}


def mobility(entry: Entry, refs: dict[str, Any], utc_offset_min: int) -> dict[str, Any]:
    return {"resourceType": "Observation", "status": _observed(entry), "category": EXAM,
            "code": text("litter or ambulatory (9-line, line 5)"), **refs,
            "effectiveDateTime": instant(entry.event.time.logged_ts, utc_offset_min),
            "valueCodeableConcept": text(entry.event.what.mobility)}


def practitioner(card: Card) -> tuple[dict[str, Any], list[Entry]] | None:
    """The first responder said on the card, with the entries it came from; None when nobody was named."""
    h = card.h_responder
    sources = [e for e in (h.name, h.last_four) if e is not None]
    if not sources:
        return None
    resource: dict[str, Any] = {"resourceType": "Practitioner"}
    if h.name is not None and h.name.event.what.name:
        resource["name"] = [{"text": h.name.event.what.name, "family": h.name.event.what.name.split()[-1]}]
    if h.last_four is not None and h.last_four.event.what.last_four:
        resource["identifier"] = [{"system": LAST_FOUR, "value": h.last_four.event.what.last_four}]
    return resource, sources


def _observed(entry: Entry) -> str:
    return "preliminary" if entry.status == "unconfirmed" else "final"
