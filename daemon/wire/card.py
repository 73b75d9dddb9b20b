"""The casualty card (DD Form 1380, JUN 2014) as the wire and the exports see it.

A card is a projection of the card log (tcccd.card.projection): every
entry holds the event it came from, so each field can be traced to the words
said and the transcript that carried them. A field nobody spoke is None or an
empty list, never filled. `status` says how far an entry can be trusted:
`recorded` (said, nothing flagged), `unconfirmed` (from a word the ASR was unsure
of, or a value outside physiological range: shown, marked for review),
`confirmed` (the medic or a tablet confirmed it). Rejected events leave the card
and are listed in `rejected`; corrected ones are named in the entry that
replaced them. Sections follow the form: A header, B mechanism/injuries/
tourniquets, C signs and symptoms over time, E treatments by MARCH, F medications
and other treatments, G notes, H first responder.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tcccd.wire.card_events import HHMM, Event

CARD_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Entry(_Model):
    event: Event
    status: Literal["recorded", "unconfirmed", "confirmed"]
    replaces: list[str] = Field(default_factory=list,
                                description="ids of earlier events this one replaced (a correction, a later value)")


class Header(_Model):
    """Section A (and D, which repeats it on the back)."""

    battle_roster: Entry | None = None
    last_four: Entry | None = None
    evac_category: Entry | None = None
    mobility: Entry | None = None
    allergies: Entry | None = None


class InjurySection(_Model):
    """Section B: mechanism of injury, injuries by body region, tourniquets per limb."""

    mechanisms: list[Entry] = Field(default_factory=list)
    injuries: list[Entry] = Field(default_factory=list)
    burn_extent: Entry | None = None
    tourniquets: list[Entry] = Field(default_factory=list)


class VitalsColumn(_Model):
    """One time column of section C: readings said at one time, or in one minute of the clock."""

    time: str = Field(pattern=HHMM)
    spoken: bool = Field(description="true: the medic said this time; false: the clock minute of the utterances")
    pulse: Entry | None = None
    bp: Entry | None = None
    rr: Entry | None = None
    spo2: Entry | None = None
    avpu: Entry | None = None
    pain: Entry | None = None


class Treatments(_Model):
    """Section E by MARCH: hemorrhage control (dressings; tourniquets are in B), airway, breathing, circulation."""

    hemorrhage: list[Entry] = Field(default_factory=list)
    airway: list[Entry] = Field(default_factory=list)
    breathing: list[Entry] = Field(default_factory=list)
    access: list[Entry] = Field(default_factory=list)
    fluids: list[Entry] = Field(default_factory=list)


class MedicationSection(_Model):
    """Section F: medications (analgesic, antibiotic, other) and the other treatments the form lists."""

    medications: list[Entry] = Field(default_factory=list)
    hypothermia: list[Entry] = Field(default_factory=list)
    eye_shields: list[Entry] = Field(default_factory=list)
    splints: list[Entry] = Field(default_factory=list)
    pill_pack: list[Entry] = Field(default_factory=list)


class ResponderSection(_Model):
    """Section H."""

    name: Entry | None = None
    last_four: Entry | None = None


class Card(_Model):
    version: Literal[1] = CARD_VERSION
    casualty: int = Field(ge=1, le=999)
    a_header: Header = Field(default_factory=Header)
    b_injury: InjurySection = Field(default_factory=InjurySection)
    c_vitals: list[VitalsColumn] = Field(default_factory=list, description="oldest first")
    e_treatments: Treatments = Field(default_factory=Treatments)
    f_medications: MedicationSection = Field(default_factory=MedicationSection)
    g_notes: list[Entry] = Field(default_factory=list,
                                 description="notes the medic dictated and every negated finding, in its words")
    h_responder: ResponderSection = Field(default_factory=ResponderSection)
    rejected: list[str] = Field(default_factory=list, description="events the medic rejected")


class CardSet(_Model):
    """Every casualty's card: what `card.get` answers and the JSON export writes."""

    version: Literal[1] = CARD_VERSION
    cards: list[Card] = Field(default_factory=list)
