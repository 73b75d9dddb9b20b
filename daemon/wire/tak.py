"""The casualty cards sent to the team's TAK network: `card.send`, `card.sends`, and the `tak` status section.

`card.send` (tcccd.tak.service) builds one CASEVAC event (Cursor on Target type
`b-r-f-h-c`, ATAK's 9-line and ZMIST) from the current mission's cards, with
only entries recorded with no doubt or confirmed, appends it to the send log
beside the card log and hands it to the TAK link: the reply comes once it is on
disk, queued or already sent. `card.sends` lists what was sent, when and to
whom. Every field: docs/tak.md and docs/protocol.md.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from tcccd.wire.model import Bool, Float, Int, Reply, Str


class SendRecord(Reply):
    """One CASEVAC the medic sent (or that waits for the link), as the send log holds it."""

    seq: Int = Field(description="its place in the send log")
    uid: Str = Field(description="the CoT event's uid: the same for every send of one request, so a re-send "
                                 "updates the marker")
    mission: Int = Field(description="the mission whose cards it carries")
    casualties: list[Int] = Field(description="the casualties it carries")
    destination: Str = Field(description="where it goes (`tak.url`)")
    requested_ts: Float = Field(description="when the medic confirmed it (epoch seconds)")
    by: Str = Field(description="who asked: `medic`, a client's name")
    via: Literal["voice", "request"] = Field(description="a spoken command confirmed by voice, or `card.send`")
    withheld: Int = Field(description="entries awaiting the medic's check, not sent")
    summary: Str = Field(description="what it says, in the words the kit reads back")
    state: Literal["queued", "sent"] = Field(description="`sent` once written to the server or the mesh")
    sent_ts: Float | None = Field(None, description="when it left (epoch seconds); null while queued")


class CardSendReply(SendRecord):
    """Final: the answer to card.send, once the request is in the send log (sent or queued for the link)."""

    TYPE: ClassVar[str] = "card.send"
    position_source: Str = Field(description="where the marker stands: `gpsd`, `TAK device <callsign>`, "
                                             "`fixed point`")
    link: Str = Field(description="the TAK link's status line, e.g. `tak: not connected ...; retry in 4 s`")


class CardSendsReply(Reply):
    """Final: the answer to card.sends: the send log (one mission's, or every one)."""

    TYPE: ClassVar[str] = "card.sends"
    sends: list[SendRecord] = Field(description="oldest first")
    link: Str = Field(description="the TAK link's status line")


class TakStatus(Reply):
    """The TAK link (tcccd.tak): connected or why not, where the marker would stand, what waits to be sent."""

    enabled: Bool = Field(description="`tak.enabled` in the config")
    destination: Str | None = Field(None, description="`tak.url`")
    connected: Bool = Field(description="the link is up (for UDP: its socket is open)")
    line: Str = Field(description="one line for the operator: `tak: connected to ...` or `tak: not connected ...`")
    error: Str | None = Field(None, description="why it is not connected")
    queued: Int = Field(description="confirmed sends waiting for the link")
    sent: Int = Field(description="sends in the log that left")
    position_source: Str | None = Field(None, description="where a marker would stand now; null: none known")
    position_age_s: Float | None = Field(None, description="the age of that position")
    position_problem: Str | None = Field(None, description="why no position is known")
    awaiting_confirmation: Str | None = Field(None, description="a spoken send read back and waiting for 'send'")
