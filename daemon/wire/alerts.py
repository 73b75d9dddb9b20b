"""One model per alert kind: what an operator must know, built by the part that noticed it.

Every alert travels as an event of type `alert` on the `alert` topic with `kind`
naming what happened and `message` saying it for a person; each kind adds the
fields that say where (the request, the worker, the span of audio). Producers
build one of these models (never a dict), and `read_alert` gives a reader the
model of the kind it received, or the plain `Alert` for a kind this version does
not know, so a client keeps working against a newer daemon.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from tcccd.wire.model import Float, Int, Reply, ReplyInvalid, Str
from tcccd.wire.status_memory import CapperAction


class Alert(Reply):
    """Event (topic `alert`): something an operator must know; `kind` says what, and the kind's model (below)
    what else it carries."""

    TYPE: ClassVar[str] = "alert"
    kind: Str = Field(description="`journal_full`, `speech_dropped`, `card_skipped`, `clock_mismatch`, "
                                  "`talk_over`, `worker_lost`, `stage_degraded`, `stage_recovered` or `memory`: one "
                                  "model each, below")
    message: Str = Field(description="what happened, for a person")

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, **super().to_data()}  # the kind is a default of each model: always sent


class JournalFull(Alert):
    """The transcript journal could not write: the medic's record has a gap (the transcript is still published)."""

    kind: Literal["journal_full"] = "journal_full"
    request_id: Str = Field(description="the request whose transcript is not in the journal")


class SpeechDropped(Alert):
    """Speech left out of the record: the decoder could only write it as a loop, no decode found words in it, or
    the audio never reached the recogniser."""

    kind: Literal["speech_dropped"] = "speech_dropped"
    request_id: Str = Field(description="the request whose audio it was")
    start_s: Float = Field(description="start of the speech left out, seconds into the request's audio")
    end_s: Float = Field(description="its end")
    reason: Str = Field(description="`decoding_loop`, `not_transcribed` or `audio_lost`")


class CardSkipped(Alert):
    """A journalled transcript is not on the casualty card: the card stage refused it, or failed on it too often."""

    kind: Literal["card_skipped"] = "card_skipped"
    request_id: Str = Field(description="the transcript's request")
    reason: Str = Field(description="why it was skipped")


class ClockMismatch(Alert):
    """The medic said an act was done at a time the kit's clock has not reached: its clock or zone is likely wrong,
    and times said are read hours off until it is set."""

    kind: Literal["clock_mismatch"] = "clock_mismatch"
    request_id: Str = Field(description="the transcript's request")
    said_hhmm: Str = Field(description="the time the medic said")
    clock_hhmm: Str = Field(description="the kit's local clock when it was said")
    ahead_min: Int = Field(description="how far the time said is ahead of the kit's clock")


class TalkOver(Alert):
    """The medic spoke over the kit's read-back: it was stopped, and the first words may be missing."""

    kind: Literal["talk_over"] = "talk_over"
    worker: Str = Field(description="the capture stage that heard it")


class WorkerLost(Alert):
    """A worker process stopped or stopped answering; it is being restarted (within its restart budget)."""

    kind: Literal["worker_lost"] = "worker_lost"
    worker: Str = Field(description="the worker")


class StageDegraded(Alert):
    """A stage reports it does not work as it should (a microphone that hears nothing, one that keeps stopping, no
    device): status shows it degraded with the reason, and `tcccd status` exits 1."""

    kind: Literal["stage_degraded"] = "stage_degraded"
    worker: Str = Field(description="the stage")
    reason: Str = Field(description="why, as the plugin says it")


class StageRecovered(Alert):
    """A stage that was degraded works again."""

    kind: Literal["stage_recovered"] = "stage_recovered"
    worker: Str = Field(description="the stage")
    reason: Str = Field(description="what it was degraded for")


class MemoryAlert(Alert, CapperAction):
    """The memory capper acted (released, unloaded, stepped down, refused new work, resumed)."""

    kind: Literal["memory"] = "memory"


KINDS: dict[str, type[Alert]] = {model.model_fields["kind"].default: model for model in (
    JournalFull, SpeechDropped, CardSkipped, ClockMismatch, TalkOver, WorkerLost, StageDegraded, StageRecovered,
    MemoryAlert)}


def read_alert(data: dict[str, Any]) -> Alert:
    """The model of the alert's kind; the plain Alert (extra keys kept) for a kind this version does not know."""
    kind = data.get("kind")
    model = KINDS.get(kind, Alert) if isinstance(kind, str) else Alert
    try:
        return model.from_data(data)
    except ReplyInvalid as exc:
        raise ReplyInvalid(f"alert of kind {kind!r}: {exc}") from None
