"""The cards as an HL7 FHIR Bundle (type collection), built and validated with fhir.resources' R4B models.

Version: FHIR R4B (4.3.0). The maintained library, fhir.resources 8.x, is built on
pydantic 2 (as tcccd is) and ships R5 and R4B models; its last release with R4
(4.0.1) models, 6.4.0, needs pydantic 1 and does not import beside tcccd. R4B is
R4's technical correction: HL7 lists its changes as limited to the medication
definition, evidence and subscription modules, and every resource used here
(Patient, Encounter, Condition, Observation, Procedure, MedicationAdministration,
Provenance, Bundle) has the same elements in R4 and R4B; an R4 server reads it.

Per casualty: a Patient (identifiers only when the medic said them), an
Encounter (class field; the evacuation category said as its priority, the
mechanisms said as its reasons), a Condition per injury, an Observation per
vital sign, burn extent and litter/ambulatory, an AllergyIntolerance per
allergen (or no known allergy), a Procedure per intervention, a
MedicationAdministration per drug, fluid or blood product (tcccd.card.exports.
fhir_resources, fhir_header), the first responder as a Practitioner (the
treatments' performer), and for every one of these a Provenance: when it was
recorded, by which rule (and by whom: the first responder as its author), and
the transcript and words it came from (what the record says and what was heard).
Negated findings and notes are not exported as resources: they are on the JSON
and printed cards. Ids are stable UUIDs derived from the events, so the same log
gives the same bundle.
"""

from __future__ import annotations

import uuid
from typing import Any

from tcccd.card.exports import fhir_header as fh
from tcccd.card.exports import fhir_resources as fr
from tcccd.wire.card import Card, CardSet, Entry

FHIR_VERSION = "4.3.0"
MEDIA_TYPE = "application/fhir+json; fhirVersion=4.3"
NAMESPACE = uuid.UUID("0b7c2e7e-9a55-4f57-9d0e-6c3b8a1f4d21")
JOURNAL = "urn:tcccd:transcript-journal"
IDENTIFIERS = {"battle_roster": ("urn:tcccd:battle-roster-number", "number"),
               "last_four": ("urn:tcccd:ssn-last-four", "digits")}
ENCOUNTER_CLASS = {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "FLD", "display": "field"}


def _url(*parts: Any) -> str:
    return f"urn:uuid:{uuid.uuid5(NAMESPACE, '/'.join(str(p) for p in parts))}"


def bundle(cards: CardSet, utc_offset_min: int, exported_ts: float) -> dict[str, Any]:
    """The bundle as JSON, validated by the library (a ValidationError if a resource breaks FHIR's structure)."""
    from fhir.resources.R4B.bundle import Bundle

    entries: list[dict[str, Any]] = []
    for card in cards.cards:
        entries += _casualty(card, utc_offset_min, exported_ts)
    raw = {"resourceType": "Bundle", "id": _url("bundle", *(e["fullUrl"] for e in entries))[9:],
           "type": "collection", "timestamp": fr.instant(exported_ts, utc_offset_min), "entry": entries}
    return Bundle.model_validate(raw).model_dump(mode="json", exclude_none=True)


def _casualty(card: Card, offset: int, exported_ts: float) -> list[dict[str, Any]]:
    patient, encounter = _url(card.casualty, "patient"), _url(card.casualty, "encounter")
    refs = {"subject": {"reference": patient}, "encounter": {"reference": encounter}}
    made: list[tuple[str, dict[str, Any], list[Entry]]] = [
        (patient, _patient(card), [e for e in (card.a_header.battle_roster, card.a_header.last_four) if e]),
        (encounter, _encounter(card, patient), [e for e in (card.a_header.evac_category, *card.b_injury.mechanisms)
                                                if e])]
    responder = fh.practitioner(card)
    performer = {"performer": [{"actor": {"reference": _url(card.casualty, "responder")}}]} if responder else {}
    if responder:
        made.append((_url(card.casualty, "responder"), responder[0], responder[1]))
    a, b = card.a_header, card.b_injury
    if a.allergies is not None:
        made += [(_url(card.casualty, a.allergies.event.id, i), r, [a.allergies])
                 for i, r in enumerate(fh.allergies(a.allergies, refs, offset))]
    for entry, make in ((a.mobility, fh.mobility), (b.burn_extent, fh.burn_extent)):
        if entry is not None:
            made.append((_url(card.casualty, entry.event.id), make(entry, refs, offset), [entry]))
    made += [(_url(card.casualty, e.event.id), fr.condition(e, refs), [e]) for e in card.b_injury.injuries]
    for column in card.c_vitals:
        for kind in ("pulse", "bp", "rr", "spo2", "avpu", "pain"):
            entry = getattr(column, kind)
            if entry is not None:
                made.append((_url(card.casualty, entry.event.id), fr.observation(entry, refs, offset), [entry]))
    e, f = card.e_treatments, card.f_medications
    for entry in [*card.b_injury.tourniquets, *e.hemorrhage, *e.airway, *e.breathing, *e.access, *f.hypothermia,
                  *f.eye_shields, *f.splints]:
        made.append((_url(card.casualty, entry.event.id), {**fr.procedure(entry, refs, offset), **performer},
                     [entry]))
    for entry in [*e.fluids, *f.medications, *f.pill_pack]:
        made.append((_url(card.casualty, entry.event.id),
                     {**fr.administration(entry, _context(refs), offset), **performer}, [entry]))
    author = _url(card.casualty, "responder") if responder else None
    out = []
    for url, resource, sources in made:
        out.append({"fullUrl": url, "resource": {"id": url[9:], **resource}})
        provenance = _url(url, "provenance")
        out.append({"fullUrl": provenance, "resource": {"id": provenance[9:],
                                                        **_provenance(url, sources, offset, exported_ts, author)}})
    return out


def _context(refs: dict[str, Any]) -> dict[str, Any]:
    """MedicationAdministration names its encounter `context`, not `encounter`."""
    return {"subject": refs["subject"], "context": refs["encounter"]}


def _patient(card: Card) -> dict[str, Any]:
    resource: dict[str, Any] = {"resourceType": "Patient"}
    identifiers = []
    for field, (system, attribute) in IDENTIFIERS.items():
        entry = getattr(card.a_header, field)
        if entry is not None:
            identifiers.append({"system": system, "value": getattr(entry.event.what, attribute)})
    if identifiers:
        resource["identifier"] = identifiers
    return resource


def _encounter(card: Card, patient: str) -> dict[str, Any]:
    """Status `unknown`: FHIR requires one, and nothing the medic says tells whether care has ended."""
    resource: dict[str, Any] = {"resourceType": "Encounter", "status": "unknown", "class": ENCOUNTER_CLASS,
                                "subject": {"reference": patient}}
    if card.a_header.evac_category is not None:
        resource["priority"] = fr.text(f"evacuation category: {card.a_header.evac_category.event.what.category}")
    if card.b_injury.mechanisms:
        resource["reasonCode"] = [fr.text(f"mechanism of injury: {e.event.what.mechanism}")
                                  for e in card.b_injury.mechanisms]
    return resource


def _provenance(target: str, sources: list[Entry], offset: int, exported_ts: float,
                author: str | None) -> dict[str, Any]:
    """Who made the resource (tcccd's card rules, named; the first responder said on the card as its author), when,
    and from which transcript and words; a resource made of no words (a Patient nobody named) was recorded when the
    bundle was made."""
    rules = sorted({e.event.rule for e in sources})
    recorded = max((e.event.time.logged_ts for e in sources), default=exported_ts)
    agents = [{"type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/provenance-participant-type",
                                    "code": "assembler"}]},
               "who": {"display": "tcccd card stage" + (f", rules {', '.join(rules)}" if rules else "")}}]
    if author is not None and author != target:
        agents.append({"type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/"
                                                      "provenance-participant-type", "code": "author"}]},
                       "who": {"reference": author}})
    if any(e.status == "confirmed" for e in sources):
        agents.append({"type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/"
                                                      "provenance-participant-type", "code": "verifier"}]},
                       "who": {"display": "medic review (confirmed on the card)"}})
    resource: dict[str, Any] = {"resourceType": "Provenance", "target": [{"reference": target}], "agent": agents,
                                "recorded": fr.instant(recorded, offset)}
    entities = [_entity(e) for e in sources]
    if entities:
        resource["entity"] = entities
    return resource


def _entity(entry: Entry) -> dict[str, Any]:
    event = entry.event
    heard = " / ".join(h.text for h in event.heard)
    words = f'said "{event.words.text}" (text {event.words.start_char}-{event.words.end_char})'
    where = {"system": JOURNAL, "value": f"{event.transcript.journal_seq}" if event.transcript.journal_seq
             else f"request {event.transcript.request_id}"}
    return {"role": "source", "what": {"identifier": where, "display": words + (f', heard "{heard}"' if heard
                                                                                else "")}}
