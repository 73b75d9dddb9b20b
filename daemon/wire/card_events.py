"""What the card stage finds in a final transcript: one event per fact the medic said, as the wire carries it.

An event is the unit of the casualty card's log (tcccd.card.log): what was
said (`what`, one typed model per kind), for which casualty, when (the time the
medic spoke and the clock time of the utterance, both kept), the words it came
from (a span of the transcript's `text` and the same words in what Whisper
`heard`), the transcript and the rule that produced it, and flags the card shows:
`uncertain` (the words were marked uncertain by the ASR), `out_of_range` (a value
no body produces, pulse 700), `negated` (not done: "no tourniquet needed", "IV
attempt unsuccessful", "held the fentanyl": kept as a note, never a positive
field; `assertion` says how it was said), `correction` ("correction, pulse 110":
it replaces the last event of its kind). A field nobody spoke is absent, never
filled.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Limb = Literal["right arm", "left arm", "right leg", "left leg"]
Side = Literal["right", "left", "both"]
HHMM = r"^([01]\d|2[0-3])[0-5]\d$"
EVENT_ID = r"^[jr][A-Za-z0-9_.:-]{1,160}$"


class _Kind(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CasualtySwitch(_Kind):
    kind: Literal["casualty"] = "casualty"
    number: int = Field(ge=1, le=999)


class Evacuation(_Kind):
    kind: Literal["evacuation"] = "evacuation"
    category: Literal["urgent", "urgent surgical", "priority", "routine", "convenience"] | None


class Mobility(_Kind):
    kind: Literal["mobility"] = "mobility"
    mobility: Literal["litter", "ambulatory"] | None


class BattleRoster(_Kind):
    kind: Literal["battle_roster"] = "battle_roster"
    number: str | None = Field(max_length=32)


class LastFour(_Kind):
    kind: Literal["last_four"] = "last_four"
    digits: str | None = Field(pattern=r"^\d{1,8}$")


class Allergies(_Kind):
    kind: Literal["allergies"] = "allergies"
    allergies: str | None = Field(max_length=200, description="'NKA' for 'no known allergies', else the words")


class Mechanism(_Kind):
    kind: Literal["mechanism"] = "mechanism"
    mechanism: str | None = Field(description="a DD 1380 box (GSW, IED, MVC...) or the word said (blast, mortar)")


class Injury(_Kind):
    kind: Literal["injury"] = "injury"
    region: str | None = Field(description="side and body part as said, e.g. 'left thigh', 'face'")
    injury: str | None = Field(description="gunshot wound, amputation, burn, suspected fracture...")


class BurnExtent(_Kind):
    kind: Literal["burn_extent"] = "burn_extent"
    percent: float | None = Field(description="total body surface area burned, %")


class Tourniquet(_Kind):
    kind: Literal["tourniquet"] = "tourniquet"
    limb: Limb | None
    category: Literal["extremity", "junctional", "truncal"] | None
    device: str | None = Field(description="CAT, SOFTT-W... when named")


class Dressing(_Kind):
    kind: Literal["dressing"] = "dressing"
    dressing: Literal["hemostatic", "pressure"] | None
    product: str | None
    site: str | None


class Airway(_Kind):
    kind: Literal["airway"] = "airway"
    airway: Literal["intact", "NPA", "SGA", "CRIC", "ET tube"] | None


class Breathing(_Kind):
    kind: Literal["breathing"] = "breathing"
    breathing: Literal["O2", "needle decompression", "chest tube", "chest seal"] | None
    side: Side | None


class Access(_Kind):
    kind: Literal["access"] = "access"
    access: Literal["IV", "IO"] | None
    site: str | None


class Fluid(_Kind):
    kind: Literal["fluid"] = "fluid"
    product: str | None
    blood: bool = Field(description="a blood product (whole blood, plasma, red cells, platelets)")
    volume: float | None
    unit: Literal["mL", "L", "unit"] | None
    route: str | None


class Medication(_Kind):
    kind: Literal["medication"] = "medication"
    name: str | None
    drug_class: Literal["analgesic", "antibiotic", "other"] | None
    dose: float | None
    dose_to: float | None = Field(None, description="the top of a range said ('two to three milligrams'); the card "
                                                    "shows a range unconfirmed")
    unit: str | None = Field(description="g, mg, mcg, mL, unit, mg/kg, mcg/kg... as said; None when none was said")
    route: str | None


class Pulse(_Kind):
    kind: Literal["pulse"] = "pulse"
    rate: float | None = Field(description="beats per minute")
    location: str | None = Field(description="radial, carotid, femoral, 'right wrist'...")


class BloodPressure(_Kind):
    kind: Literal["bp"] = "bp"
    systolic: float | None
    diastolic: float | None


class RespiratoryRate(_Kind):
    kind: Literal["rr"] = "rr"
    rate: float | None = Field(description="breaths per minute")


class SpO2(_Kind):
    kind: Literal["spo2"] = "spo2"
    percent: float | None


class Avpu(_Kind):
    kind: Literal["avpu"] = "avpu"
    level: Literal["A", "V", "P", "U"] | None


class Pain(_Kind):
    kind: Literal["pain"] = "pain"
    score: float | None = Field(description="0-10 as said")


class Hypothermia(_Kind):
    kind: Literal["hypothermia"] = "hypothermia"
    method: str | None


class EyeShield(_Kind):
    kind: Literal["eye_shield"] = "eye_shield"
    side: Side | None


class Splint(_Kind):
    kind: Literal["splint"] = "splint"
    site: str | None


class PillPack(_Kind):
    kind: Literal["pill_pack"] = "pill_pack"


class Note(_Kind):
    kind: Literal["note"] = "note"
    text: str = Field(max_length=2000)


class Responder(_Kind):
    kind: Literal["responder"] = "responder"
    name: str | None
    last_four: str | None = Field(pattern=r"^\d{1,8}$")


What = Annotated[
    CasualtySwitch | Evacuation | Mobility | BattleRoster | LastFour | Allergies | Mechanism | Injury | BurnExtent
    | Tourniquet | Dressing | Airway | Breathing | Access | Fluid | Medication | Pulse | BloodPressure
    | RespiratoryRate | SpO2 | Avpu | Pain | Hypothermia | EyeShield | Splint | PillPack | Note | Responder,
    Field(discriminator="kind")]
VITAL_KINDS = ("pulse", "bp", "rr", "spo2", "avpu", "pain")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextSpan(_Model):
    """Characters [start_char, end_char) of the transcript's `text`, and those characters."""

    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    text: str


class HeardSpan(_Model):
    """The same words in what Whisper wrote: characters of `segments[segment].heard`."""

    segment: int = Field(ge=0)
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    text: str


class EventTime(_Model):
    """When: the clock time of the utterance always; the time of the act only when the medic said it."""

    logged_ts: float = Field(description="the utterance's clock time, epoch seconds")
    logged_hhmm: str = Field(pattern=HHMM, description="the same, local 24-hour time")
    spoken: str | None = Field(None, description="a time the medic said ('0915'), as written in the text")
    relative_min: float | None = Field(None, description="'five minutes ago' -> -5")
    at_hhmm: str | None = Field(None, pattern=HHMM,
                                description="the act's time: spoken, or logged + relative; None when neither was said")


class TranscriptRef(_Model):
    journal_seq: int | None = Field(None, description="the transcript's row in the journal (None: not journalled)")
    request_id: str
    source: str = Field(description="mic, client or wyoming")


class Event(_Model):
    id: str = Field(pattern=EVENT_ID, description="'j<journal_seq>.<n>' (or 'r<request id>.<n>'): stable on replay")
    casualty: int = Field(ge=1, le=999)
    what: What
    time: EventTime
    words: TextSpan
    heard: list[HeardSpan] = Field(description="[] when the transcript carried no heard trail")
    transcript: TranscriptRef
    rule: str = Field(description="the rule that produced it, e.g. 'tourniquet.limb'")
    uncertain: bool = False
    out_of_range: bool = False
    negated: bool = False
    correction: bool = False
    assertion: str = Field("done", max_length=32, pattern=r"^[a-z_]+$",
                           description="how it was said: done, restated (done, said again at a handover: "
                                       "the entry it agrees with), or a note's status (retracted, absent, failed, "
                                       "removed, withheld)")

    @property
    def kind(self) -> str:
        return self.what.kind


class Review(_Model):
    """The medic's or a tablet's verdict on one event; appended to the log, never an update."""

    event: str = Field(pattern=EVENT_ID)
    action: Literal["confirm", "reject"]
    ts: float
    by: str = Field(max_length=64, description="who reviewed: 'medic', a tablet's name")
