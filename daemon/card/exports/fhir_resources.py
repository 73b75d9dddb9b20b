"""One FHIR resource (as a JSON dict) per card entry: Condition, Observation, Procedure, MedicationAdministration.

Codes only where a standard code is known for sure: LOINC for the vital signs
(heart rate 8867-4, respiratory rate 9279-1, SpO2 59408-5, blood pressure panel
85354-9 with systolic 8480-6 and diastolic 8462-4, pain 0-10 72514-3) and UCUM
units. No LOINC code for AVPU was found, so its Observation carries the text
"AVPU" and no code rather than an invented one; injuries, body sites and
procedures carry the medic's words as CodeableConcept.text (no SNOMED CT code
was checked here, so none is claimed). A time is set only when the medic said
it; a MedicationAdministration, whose effective time FHIR requires, then says
why it has none (data-absent-reason "unknown").
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from tcccd.card.exports.lines import AVPU_WORDS
from tcccd.wire.card import Entry
from tcccd.wire.card_events import EventTime

LOINC = "http://loinc.org"
UCUM = "http://unitsofmeasure.org"
DATA_ABSENT = "http://hl7.org/fhir/StructureDefinition/data-absent-reason"
VITAL_SIGNS = {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category",
                           "code": "vital-signs", "display": "Vital Signs"}]}
VITAL_CODES = {"pulse": ("8867-4", "Heart rate"), "rr": ("9279-1", "Respiratory rate"),
               "spo2": ("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry"),
               "bp": ("85354-9", "Blood pressure panel with all children optional"),
               "pain": ("72514-3", "Pain severity - 0-10 verbal numeric rating [Score] - Reported")}
BP_PARTS = (("systolic", "8480-6", "Systolic blood pressure"), ("diastolic", "8462-4", "Diastolic blood pressure"))
UNITS = {"mg": ("mg", "mg"), "g": ("g", "g"), "mcg": ("mcg", "ug"), "mL": ("mL", "mL"), "L": ("L", "L"),
         "kg": ("kg", "kg"), "mg/kg": ("mg/kg", "mg/kg"), "unit": ("unit", "{unit}")}  # card unit -> shown, UCUM
PROCEDURE_KINDS = ("tourniquet", "dressing", "airway", "breathing", "access", "hypothermia", "eye_shield", "splint")


def instant(ts: float, utc_offset_min: int) -> str:
    zone = timezone(timedelta(minutes=utc_offset_min))
    return datetime.fromtimestamp(ts, zone).isoformat(timespec="seconds")


def said_time(time: EventTime, utc_offset_min: int) -> str | None:
    """The act's time as a FHIR dateTime: the HHMM said, on the date that puts it nearest the utterance."""
    if time.at_hhmm is None:
        return None
    logged = datetime.fromtimestamp(time.logged_ts, timezone(timedelta(minutes=utc_offset_min)))
    candidates = [(logged + timedelta(days=d)).replace(hour=int(time.at_hhmm[:2]), minute=int(time.at_hhmm[2:]),
                                                       second=0, microsecond=0) for d in (-1, 0, 1)]
    return min(candidates, key=lambda c: abs(c - logged)).isoformat(timespec="seconds")


def text(value: str) -> dict[str, str]:
    return {"text": value}


def condition(entry: Entry, refs: dict[str, Any]) -> dict[str, Any]:
    what = entry.event.what
    resource = {"resourceType": "Condition", "code": text(what.injury or "injury"), **refs}
    if what.region:
        resource["bodySite"] = [text(what.region)]
    status = _verification(entry)
    if status:
        resource["verificationStatus"] = {"coding": [
            {"system": "http://terminology.hl7.org/CodeSystem/condition-ver-status", "code": status}]}
    return resource


def _verification(entry: Entry) -> str | None:
    return {"unconfirmed": "unconfirmed", "confirmed": "confirmed"}.get(entry.status)


def observation(entry: Entry, refs: dict[str, Any], utc_offset_min: int) -> dict[str, Any]:
    what, kind = entry.event.what, entry.event.kind
    resource: dict[str, Any] = {"resourceType": "Observation", "category": [VITAL_SIGNS],
                                "status": "preliminary" if entry.status == "unconfirmed" else "final", **refs,
                                "issued": instant(entry.event.time.logged_ts, utc_offset_min)}
    if kind in VITAL_CODES:
        code, display = VITAL_CODES[kind]
        resource["code"] = {"coding": [{"system": LOINC, "code": code, "display": display}], "text": display}
    else:
        resource["code"] = text("AVPU")  # no LOINC code for AVPU was found: text only, nothing invented
    if kind == "bp":
        resource["component"] = [
            {"code": {"coding": [{"system": LOINC, "code": code, "display": display}]},
             "valueQuantity": _quantity(getattr(what, part), "mm[Hg]")}
            for part, code, display in BP_PARTS if getattr(what, part) is not None]
    elif kind == "avpu":
        resource["valueCodeableConcept"] = text(AVPU_WORDS[what.level])
    else:
        field, unit = {"pulse": ("rate", "/min"), "rr": ("rate", "/min"), "spo2": ("percent", "%"),
                       "pain": ("score", "{score}")}[kind]
        resource["valueQuantity"] = _quantity(getattr(what, field), unit)
    if kind == "pulse" and what.location:
        resource["bodySite"] = text(what.location)
    when = said_time(entry.event.time, utc_offset_min)
    if when:
        resource["effectiveDateTime"] = when
    return resource


def _quantity(value: float, unit: str) -> dict[str, Any]:
    """A UCUM quantity; the units used here are written as their UCUM codes."""
    return {"value": value, "unit": unit, "system": UCUM, "code": unit}


def procedure(entry: Entry, refs: dict[str, Any], utc_offset_min: int) -> dict[str, Any]:
    what, kind = entry.event.what, entry.event.kind
    name, site = _procedure_words(kind, what)
    resource: dict[str, Any] = {"resourceType": "Procedure", "status": "completed", "code": text(name), **refs}
    if site:
        resource["bodySite"] = [text(site)]
    when = said_time(entry.event.time, utc_offset_min)
    if when:
        resource["performedDateTime"] = when
    return resource


def _procedure_words(kind: str, what: Any) -> tuple[str, str | None]:
    if kind == "tourniquet":
        return " ".join(p for p in ("tourniquet", what.device and f"({what.device})", what.category) if p), what.limb
    if kind == "dressing":
        return " ".join(p for p in (what.dressing, "dressing", what.product and f"({what.product})") if p), what.site
    if kind == "airway":
        return f"airway: {what.airway}", None
    if kind == "breathing":
        return what.breathing, f"{what.side} chest" if what.side in ("right", "left") else None
    if kind == "access":
        return f"{what.access} access", what.site
    if kind == "hypothermia":
        return " ".join(p for p in ("hypothermia prevention", what.method and f"({what.method})") if p), None
    if kind == "eye_shield":
        return "eye shield", {"right": "right eye", "left": "left eye", "both": "both eyes"}.get(what.side or "")
    return "splint", what.site


def administration(entry: Entry, refs: dict[str, Any], utc_offset_min: int) -> dict[str, Any]:
    """A medication, fluid or blood product given, with dose, route and the time said (or why there is none)."""
    what, kind = entry.event.what, entry.event.kind
    if kind == "pill_pack":
        name, category, amount, unit, route = "combat wound medication pack", "other", None, None, None
    elif kind == "fluid":
        name, category = what.product, "blood product" if what.blood else "fluid"
        amount, unit, route = what.volume, what.unit, what.route
    else:
        name, category, amount, unit, route = what.name, what.drug_class, what.dose, what.unit, what.route
    resource: dict[str, Any] = {"resourceType": "MedicationAdministration", "status": "completed",
                                "medicationCodeableConcept": text(name or "medication"), **refs}
    if category:
        resource["category"] = text(category)
    dosage: dict[str, Any] = {}
    if amount is not None:
        shown, code = UNITS.get(unit or "", (unit or "", None))
        dosage["dose"] = {"value": amount, "unit": shown, **({"system": UCUM, "code": code} if code else {})}
    if route:
        dosage["route"] = text(route)
    if dosage:
        resource["dosage"] = dosage
    when = said_time(entry.event.time, utc_offset_min)
    resource.update({"effectiveDateTime": when} if when else {
        "effectivePeriod": {"extension": [{"url": DATA_ABSENT, "valueCode": "unknown"}]}})
    return resource
