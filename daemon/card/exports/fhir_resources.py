"""One FHIR resource (as a JSON dict) per card entry: Condition, Observation, Procedure, MedicationAdministration.

Codes only where a standard code is known for sure: LOINC for the vital signs
(heart rate 8867-4, respiratory rate 9279-1, SpO2 2708-6 with pulse oximetry
59408-5, blood pressure panel 85354-9 with systolic 8480-6 and diastolic 8462-4,
pain 0-10 72514-3) and UCUM units. Heart rate, respiratory rate, SpO2 and blood
pressure meet FHIR's vital-signs profiles (category, code, UCUM unit, an
effective time: the time said, else the utterance's clock time; a palpated
blood pressure carries its diastolic as absent, data-absent-reason
"not-performed"). No LOINC code for AVPU was found, so its Observation carries
the text "AVPU" and no code rather than an invented one; injuries, body sites
and procedures carry the medic's words as CodeableConcept.text (no SNOMED CT
code was checked here, so none is claimed). A treatment's time is set only when
the medic said it; a MedicationAdministration, whose effective time FHIR
requires, then says why it has none (data-absent-reason "unknown").

A treatment the card shows unconfirmed (a doubted word, a dose said as a range)
is never `completed`: its status is `unknown`, its statusReason says the words
were doubted and what they were, until the medic confirms it on the card.
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
DATA_ABSENT_CODES = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
OBSERVATION_CATEGORY = "http://terminology.hl7.org/CodeSystem/observation-category"
VITAL_CODES = {"pulse": [("8867-4", "Heart rate")], "rr": [("9279-1", "Respiratory rate")],
               "spo2": [("2708-6", "Oxygen saturation in Arterial blood"),
                        ("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry")],
               "bp": [("85354-9", "Blood pressure panel with all children optional")],
               "pain": [("72514-3", "Pain severity - 0-10 verbal numeric rating [Score] - Reported")]}
PROFILES = {"pulse": "heartrate", "rr": "resprate", "spo2": "oxygensat", "bp": "bp"}  # FHIR's vital-signs profiles
CATEGORIES = {"pain": "survey", "avpu": "exam"}  # not vital signs in FHIR's sense: no vital-signs profile claimed
BP_PARTS = (("systolic", "8480-6", "Systolic blood pressure"), ("diastolic", "8462-4", "Diastolic blood pressure"))
UNITS = {"mg": ("mg", "mg"), "g": ("g", "g"), "mcg": ("mcg", "ug"), "mL": ("mL", "mL"), "L": ("L", "L"),
         "kg": ("kg", "kg"), "mg/kg": ("mg/kg", "mg/kg"), "mcg/kg": ("mcg/kg", "ug/kg"),
         "unit": ("unit", "{unit}")}  # card unit -> shown, UCUM
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
    category = CATEGORIES.get(kind, "vital-signs")
    resource: dict[str, Any] = {"resourceType": "Observation",
                                "category": [{"coding": [{"system": OBSERVATION_CATEGORY, "code": category}]}],
                                "status": "preliminary" if entry.status == "unconfirmed" else "final", **refs,
                                "effectiveDateTime": said_time(entry.event.time, utc_offset_min) or instant(
                                    entry.event.time.logged_ts, utc_offset_min),
                                "issued": instant(entry.event.time.logged_ts, utc_offset_min)}
    if kind in PROFILES:
        resource["meta"] = {"profile": [f"http://hl7.org/fhir/StructureDefinition/{PROFILES[kind]}"]}
    if kind in VITAL_CODES:
        codes = VITAL_CODES[kind]
        resource["code"] = {"coding": [{"system": LOINC, "code": c, "display": d} for c, d in codes],
                            "text": codes[-1][1]}
    else:
        resource["code"] = text("AVPU")  # no LOINC code for AVPU was found: text only, nothing invented
    if kind == "bp":
        resource["component"] = [_bp_part(getattr(what, part), code, display) for part, code, display in BP_PARTS]
    elif kind == "avpu":
        resource["valueCodeableConcept"] = text(AVPU_WORDS[what.level])
    else:
        field, unit = {"pulse": ("rate", "/min"), "rr": ("rate", "/min"), "spo2": ("percent", "%"),
                       "pain": ("score", "{score}")}[kind]
        resource["valueQuantity"] = _quantity(getattr(what, field), unit)
    if kind == "pulse" and what.location:
        resource["bodySite"] = text(what.location)
    return resource


def _bp_part(value: float | None, code: str, display: str) -> dict[str, Any]:
    """A blood pressure component; one not measured (a palpated pressure's diastolic) says why it is absent."""
    part: dict[str, Any] = {"code": {"coding": [{"system": LOINC, "code": code, "display": display}]}}
    if value is None:
        part["dataAbsentReason"] = {"coding": [{"system": DATA_ABSENT_CODES, "code": "not-performed"}],
                                    "text": "palpated: systolic only"}
    else:
        part["valueQuantity"] = _quantity(value, "mm[Hg]")
    return part


def _quantity(value: float, unit: str) -> dict[str, Any]:
    """A UCUM quantity; the units used here are written as their UCUM codes."""
    return {"value": value, "unit": unit, "system": UCUM, "code": unit}


def procedure(entry: Entry, refs: dict[str, Any], utc_offset_min: int) -> dict[str, Any]:
    what, kind = entry.event.what, entry.event.kind
    name, site = _procedure_words(kind, what)
    resource: dict[str, Any] = {"resourceType": "Procedure", **_status(entry), "code": text(name), **refs}
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
    status = _status(entry)
    if "statusReason" in status:
        status["statusReason"] = [status["statusReason"]]
    resource: dict[str, Any] = {"resourceType": "MedicationAdministration", **status,
                                "medicationCodeableConcept": text(name or "medication"), **refs}
    if category:
        resource["category"] = text(category)
    dosage: dict[str, Any] = {}
    upto = getattr(what, "dose_to", None)
    if amount is not None and upto is not None:  # a range said: written as said, never one end of it
        dosage["text"] = f"{amount:g} to {upto:g} {unit or ''}".strip()
    elif amount is not None and unit is None:  # "ketamine 50 IM": the number as said, no unit given
        dosage["dose"] = {"value": amount}
    elif amount is not None:
        shown, code = UNITS.get(unit, (unit, None))
        dosage["dose"] = {"value": amount, "unit": shown, **({"system": UCUM, "code": code} if code else {})}
    if route:
        dosage["route"] = text(route)
    if dosage:
        resource["dosage"] = dosage
    when = said_time(entry.event.time, utc_offset_min)
    resource.update({"effectiveDateTime": when} if when else {
        "effectivePeriod": {"extension": [{"url": DATA_ABSENT, "valueCode": "unknown"}]}})
    return resource


def _status(entry: Entry) -> dict[str, Any]:
    """`completed` for a treatment said and not in doubt; `unknown`, with the doubted words, while it is unconfirmed."""
    if entry.status != "unconfirmed":
        return {"status": "completed"}
    event = entry.event
    heard = " / ".join(h.text for h in event.heard)
    why = ("a value outside what a body gives" if event.out_of_range else "a dose said as a range"
           if getattr(event.what, "dose_to", None) is not None else "a word the recogniser doubted")
    said = f'unconfirmed: {why} in "{event.words.text}"' + (f' (heard "{heard}")' if heard else "")
    return {"status": "unknown", "statusReason": text(said + "; awaiting the medic's confirmation on the card")}
