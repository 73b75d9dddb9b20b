"""The contract between the daemon and the card stage: `card.extract` in, `card.events` out.

The card plugin keeps no state between requests (a worker restart loses nothing):
each `card.extract` carries one final transcript with its audit trail and the
context the rules need (which casualty is current, the utterance's clock time and
the local UTC offset); the reply `card.events` carries the events found, in the
order said, casualty switches included, and the casualty current after them. The
daemon appends the events to the card log, then keeps `casualty` for the next
transcript. docs/card.md documents every field.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tcccd.wire.card_events import HHMM, Event, What

EXTRACT_TYPE = "card.extract"
EVENTS_TYPE = "card.events"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Trail(BaseModel):
    """A piece of the ASR's audit trail: keys the card does not read (the audio check's scores, the reading it
    scored) belong to the ASR's contract and are ignored, not refused."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class VocabularyRewrite(_Trail):
    """A run of heard words rewritten into a lexicon term; `start_char`/`end_char` index the segment's `heard`."""

    heard: str
    term: str
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    similarity: float | None = None


class NumberRewrite(_Trail):
    """A number written as a medic writes it; the span indexes `heard` after the vocabulary rewrites."""

    heard: str
    written: str
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    rule: str = Field(description="time, ratio, percent, dose or vital")


class WordTiming(_Trail):
    text: str
    start_s: float
    end_s: float
    probability: float
    start_char: int = Field(ge=0, description="in the segment's text")
    end_char: int = Field(ge=0)


class UncertainWord(_Trail):
    text: str
    start_char: int = Field(ge=0, description="in the segment's text")
    end_char: int = Field(ge=0)
    probability: float
    alternative: str | None = None


class Segment(BaseModel):
    """One ASR segment as the transcript carries it. Fields the card does not read (timings, no_speech_prob)
    are ignored rather than refused: they belong to the ASR's contract, not this one."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    text: str
    heard: str | None = Field(None, description="absent on transcripts without a heard trail")
    corrections: list[VocabularyRewrite] = Field(default_factory=list)
    numbers: list[NumberRewrite] = Field(default_factory=list)
    words: list[WordTiming] | None = None
    uncertain: list[UncertainWord] | None = None


MAX_OTHERS = 16  # casualties whose last entry is carried besides the current one's


class Restatable(_Strict):
    """The last entry said: what a restated slot ("Correction, 25 mg.") corrects, with its time."""

    what: What
    spoken: str | None = Field(None, max_length=8)
    relative_min: float | None = None
    at_hhmm: str | None = Field(None, pattern=HHMM)
    casualty: int | None = Field(None, description="whose entry it is: a correction after a switch is not of it")


class Carry(_Strict):
    """What one transcript leaves for the next: the stage keeps no state, so the daemon carries it, as `casualty`."""

    correcting: bool = Field(False, description="'Correction.' ended the transcript: what is said next restates")
    last: Restatable | None = Field(None, description="the last entry said, for a correction in the next transcript")
    others: list[Restatable] = Field(default_factory=list, max_length=MAX_OTHERS, description=(
        "the last entry of each other casualty seen lately: 'Back to one, you've got the wrong arm' corrects his"))
    casualty_doubted: bool = Field(False, description="the current casualty's number was a word the ASR doubted: "
                                                      "entries filed under it are shown unconfirmed")
    asked: Literal["pulse", "bp", "systolic", "rr", "spo2", "pain", "allergies", "last_four"] | None = Field(
        None, description="the transcript ended asking for this reading, the allergies or the last four: a value "
                          "said next answers")
    undone: Restatable | None = Field(None, description="the last thing said as failed or removed: 'second one's in' "
                                                        "said next is it, done again")
    asked_when: Restatable | None = Field(None, description="the treatment the transcript ended asking the time of "
                                          "('What time did his TQ go on?'): a time said next is its time")
    open_status: str | None = Field(None, max_length=32, description="how the last sentence was said when nothing in "
                                    "it was done (request, plan, question...): 'And a SAM splint.' goes on with it")


class CardExtract(_Strict):
    """`data` of a `card.extract` request (daemon -> card stage), one per final transcript."""

    text: str = Field(max_length=100_000, description="the transcript's text: what the record says")
    segments: list[Segment] = Field(default_factory=list,
                                    description="its segments, in order; their texts joined by spaces make `text`")
    journal_seq: int | None = Field(None, ge=1)
    request_id: str = Field(min_length=1, max_length=128)
    source: str = Field(min_length=1, max_length=32)
    utterance_ts: float = Field(gt=0, description="clock time of the utterance (the journal entry's ts), epoch s")
    utc_offset_min: int = Field(ge=-14 * 60, le=14 * 60,
                                description="the kit's local offset from UTC, for the card's 24-hour times")
    casualty: int = Field(ge=1, le=999, description="the casualty current before this transcript")
    carry: Carry = Field(default_factory=Carry, description="what the previous transcript left (its reply's carry)")


class ClockAhead(_Strict):
    """An act said as over ("applied at 0912") with a clock time ahead of the kit's clock when it was said: the
    medic's watch and the kit's clock disagree. The act is on the card, unconfirmed."""

    said_hhmm: str = Field(pattern=HHMM, description="the time the medic said")
    clock_hhmm: str = Field(pattern=HHMM, description="the kit's local clock when it was said")
    ahead_min: int = Field(ge=1, lt=12 * 60, description="how far the time said is ahead of the kit's clock")


class CardEvents(_Strict):
    """`data` of the final `card.events` reply (card stage -> daemon)."""

    events: list[Event]
    casualty: int = Field(ge=1, le=999, description="the casualty current after this transcript")
    carry: Carry = Field(default_factory=Carry, description="send it as `carry` with the next transcript")
    clock_ahead: ClockAhead | None = Field(None, description="the act said as over whose time is furthest ahead of "
                                                             "the kit's clock, if any")
