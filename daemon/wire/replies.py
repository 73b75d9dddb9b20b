"""One small model per reply and event type: what tcccd answers and publishes, typed.

Beside the request models (tcccd.wire.messages), as the `wyoming` package has
one class per event: `Transcript.from_message(reply).text` instead of
`reply.data.get("text", "")`, and `ProfileReply(...).answer(request)` to build one.
What plugins produce (transcripts, audio, the capture stage's answer) is an
`OpenReply`: its declared fields are what tcccd's own plugins promise, and a
plugin may add its own (a segment's word timings, say) without breaking a reader.
The status report has its own module (tcccd.wire.status).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import Field, TypeAdapter, ValidationError

from tcccd.wire.alerts import Alert, read_alert
from tcccd.wire.card_replies import CardClosed, CardReviewed, CardsReply, CardUpdate
from tcccd.wire.errors import ErrorReply
from tcccd.wire.model import Bool, Float, Int, OpenReply, Reply, ReplyInvalid, Str
from tcccd.wire.protocol import Message
from tcccd.wire.status import ProfileState, StatusReport
from tcccd.wire.tak import CardSendReply, CardSendsReply


class Pong(Reply):
    """Final: the answer to `ping`."""

    TYPE: ClassVar[str] = "pong"


class ProfileReply(ProfileState):
    """Final: the answer to profile.get and profile.set; also the `profile` event once a switch applied."""

    TYPE: ClassVar[str] = "profile"
    available: list[Str] = Field(description="the installed profiles")


class ProfileDecision(Reply):
    """Event (topic `profile`): what the battery/thermal policy decided, with the readings behind it."""

    TYPE: ClassVar[str] = "profile.decision"
    name: Str = Field(description="the profile to run (the same as `effective`)")
    at: Float = Field(description="when it was decided (epoch seconds)")
    requested: Str = Field(description="the profile asked for")
    effective: Str = Field(description="the profile to run")
    reason: Str = Field(description="why")
    cap: Str | None = Field(None, description="the profile a cap holds it to, or null")
    reading: Str | None = Field(None, description="the reading behind the cap")
    value: Float | None = Field(None, description="that reading's value")
    override_until: Float | None = Field(None, description="an override bypasses the caps until then (epoch s)")
    readings: dict[Str, Float | None] = Field(default_factory=dict, description="the readings it decided on")


class Correction(OpenReply):
    """A run of heard words that sounded like a lexicon term (`vocabulary_correction`)."""

    heard: Str | None = Field(None, description="the words heard")
    term: Str | None = Field(None, description="the lexicon term written instead")
    start_char: Int | None = Field(None, description="where the words start in the segment's `heard`")
    end_char: Int | None = Field(None, description="where they end")
    similarity: Float | None = Field(None, description="how alike they sounded, 0-1")
    audio_logprob_heard: Float | None = Field(None, description="the decoder's log-probability of the segment "
                                              "with the words heard, on the same audio")
    audio_logprob_term: Float | None = Field(None, description="the same with the term: kept only when at most "
                                             "`term_margin_logprob` below the heard words")
    source: Str | None = Field(None, description="`unbiased decoder` when the rewrite undoes the lexicon bias")


class NumberReading(OpenReply):
    """One reading of a number written in a form nobody says ('0.922' after 'at'), scored on the audio."""

    text: Str = Field(description="the reading in digits ('0922')")
    audio_logprob: Float = Field(description="the segment's log-probability with it in the number's place")
    source: Str = Field(description="`heard` (the digits written, regrouped: the only kind ever written), "
                                    "`decoder` (its own digits there), `leading zero` or `twin`")


class NumberRewrite(OpenReply):
    """Spoken numbers written as a medic writes them (`write_numbers`)."""

    heard: Str | None = Field(None, description="the words heard")
    written: Str | None = Field(None, description="what the record says")
    start_char: Int | None = Field(None, description="where it starts in the corrected text")
    end_char: Int | None = Field(None, description="where it ends")
    rule: Str | None = Field(None, description="`time`, `ratio`, `percent`, `dose` or `vital`; `form`: a number "
                             "in a form nobody says, written as the reading of its digits the audio supports")
    reading: Str | None = Field(None, description="the words the audio check scored for it ('110' for '100 and "
                                "10'); the same as `heard` when the rewrite changes only the spelling")
    audio_logprob_heard: Float | None = Field(None, description="score of the segment as heard; null when the "
                                              "rewrite changes no token and was not scored")
    audio_logprob_written: Float | None = Field(None, description="score with `reading`")
    readings: list[NumberReading] | None = Field(None, description="with rule `form`: every reading scored, best "
                                                 "first")


class Considered(OpenReply):
    """A rewrite the audio check rejected: kept for the reviewer, never in `text`."""

    kind: Str | None = Field(None, description="`vocabulary`, `number` or `bias`")
    heard: Str | None = Field(None, description="the words heard")
    proposed: Str | None = Field(None, description="what would have replaced them")
    start_char: Int | None = Field(None, description="where the words start in the segment's `heard`")
    end_char: Int | None = Field(None, description="where they end")
    audio_logprob_heard: Float | None = Field(None, description="score of the segment as heard")
    audio_logprob_proposed: Float | None = Field(None, description="score with the proposal")
    reason: Str | None = Field(None, description="why it was rejected")


class Word(OpenReply):
    """One word of the record with its time in the audio (cross-attention alignment) and the model's
    probability."""

    text: Str = Field(description="the word as `text` spells it")
    start_s: Float = Field(description="start, on the recording's clock")
    end_s: Float = Field(description="end")
    probability: Float = Field(description="the model's probability of the word's tokens (mean), 0-1")
    start_char: Int = Field(description="where it starts in the segment's `text`")
    end_char: Int = Field(description="where it ends")


class UncertainWord(OpenReply):
    """A word the model gave a probability under `uncertain_below`, a number the audio does not tell from its
    twin (`twin`: "fifty" for "fifteen"), or a number in a form nobody says (`readings`): for the medic to
    confirm."""

    text: Str = Field(description="the word")
    start_char: Int = Field(description="where it starts in the segment's `text`")
    end_char: Int = Field(description="where it ends")
    probability: Float = Field(description="the model's probability, 0-1")
    alternative: Str | None = Field(None, description="the model's best other word there, if any")
    twin: Str | None = Field(None, description="the word with its number's sound-alike in its place ('15 mg' for "
                                               "'50 mg', 0950 for 0915, 'fifty' for 'fifteen'), which the audio "
                                               "does not rule out: the reason for the doubt")
    audio_logprob_heard: Float | None = Field(None, description="with `twin` or `readings`: the segment's "
                                              "log-probability as heard")
    audio_logprob_twin: Float | None = Field(None, description="with `twin`: with the twin in the number's place")
    readings: list[NumberReading] | None = Field(None, description="a number where a time or quantity is expected, "
                                                 "in a form that cannot be one ('0.922', '1 30', '1-4-D'): every "
                                                 "reading the audio scored, best first")


class Segment(OpenReply):
    """One piece of what was heard: the record's text beside the model's, with every rewrite listed."""

    start_s: Float | None = Field(None, description="start, seconds on the recording's (or stream's) clock")
    end_s: Float | None = Field(None, description="end")
    text: Str | None = Field(None, description="what goes on the record")
    heard: Str | None = Field(None, description="what the model wrote before tcccd rewrote anything")
    corrections: list[Correction] | None = Field(None, description="vocabulary corrections, in order")
    numbers: list[NumberRewrite] | None = Field(None, description="number rewrites, after the corrections")
    avg_logprob: Float | None = Field(None, description="the decoder's mean token log-probability")
    no_speech_prob: Float | None = Field(None, description="the model's probability that it heard no speech")
    considered: list[Considered] | None = Field(None, description="rewrites the audio check rejected")
    words: list[Word] | None = Field(None, description="every word of `text`, timed (final results)")
    uncertain: list[UncertainWord] | None = Field(None, description="the words the model was unsure of")


class DroppedSpeech(OpenReply):
    """Speech left out of the record, reported (an `alert` too): the decoder could only write it as a loop
    (`decoding_loop`), no decode turned speech VAD found into words (`not_transcribed`), or chunks of a stream never
    reached the recogniser (`audio_lost`: a stage fell behind, or the microphone's stream stopped or overran)."""

    start_s: Float = Field(description="start of the speech left out")
    end_s: Float = Field(description="its end")
    reason: Str = Field(description="`decoding_loop`, `not_transcribed` or `audio_lost`")
    chunks_missing: Int | None = Field(None, description="with `audio_lost`: how many chunks never came")


class Utterance(OpenReply):
    """One finished utterance of a stream, as the stream's closing transcript lists it."""

    partial: Bool | None = Field(None, description="false: a finished utterance")
    text: Str | None = Field(None, description="its text")
    utterance: Int | None = Field(None, description="its number in the stream, from 0")
    start_s: Float | None = Field(None, description="start, on the stream's clock")
    end_s: Float | None = Field(None, description="end")
    dropped: list[DroppedSpeech] | None = Field(None, description="speech left out of it")


class Transcript(OpenReply):
    """A whole recording's (final); in a stream, a partial or a finished utterance, then the closing summary
    (final). Also the `transcript` event."""

    TYPE: ClassVar[str] = "transcript"
    text: Str = Field("", description="what goes on the record; empty when nothing was said")
    segments: list[Segment] | None = Field(None, description="what was heard, piece by piece")
    duration_s: Float | None = Field(None, description="the recording's length")
    timings_ms: dict[Str, Float] | None = Field(None, description="where the time went, by step")
    backend: Str | None = Field(None, description="the inference backend that decoded it")
    dropped: list[DroppedSpeech] | None = Field(None, description="present only when speech was left out")
    partial: Bool | None = Field(None, description="in a stream: true while an utterance goes on")
    utterance: Int | None = Field(None, description="in a stream: the utterance's number")
    start_s: Float | None = Field(None, description="in a stream: the utterance's start on the stream's clock")
    end_s: Float | None = Field(None, description="its end")
    utterances: list[Utterance] | None = Field(None, description="a stream's closing transcript: every utterance")
    source: Str | None = Field(None, description="who spoke it in: `mic`, `client` or `wyoming`")
    journal_seq: Int | None = Field(None, description="its place in the transcript journal, once recorded")


class JournalEntry(Reply):
    seq: Int = Field(description="its `journal_seq`")
    ts: Float = Field(description="when it was recorded (epoch seconds)")
    source: Str = Field(description="`mic`, `client` or `wyoming`")
    profile: Str = Field(description="the profile that ran")
    request_id: Str = Field(description="the request it answered")
    text: Str = Field(description="what the record says")
    confidence: Float | None = Field(None, description="mean token probability over its segments")
    segments: list[Segment] = Field(description="its segments, as sent")


class TranscriptsReply(Reply):
    """Final: the answer to transcripts.since. The transcripts are in the payload (a JSON list of JournalEntry,
    oldest first), not in `data`: with their word timings a mission's record outgrows the 64 KiB header. One reply
    holds at most the request's `limit`; when `more` is true, ask again with `after_seq` set to `last_seq`."""

    TYPE: ClassVar[str] = "transcripts"
    PAYLOAD_PARTS: ClassVar[tuple[type[Reply], ...]] = (JournalEntry,)
    count: Int = Field(description="transcripts in the payload")
    last_seq: Int | None = Field(description="the `journal_seq` of the last of them (null when none): the next "
                                             "page's `after_seq`")
    more: Bool = Field(description="the request's `limit` was reached: there may be more after `last_seq`")
    media_type: Str = Field(description="the payload's format: `application/json`, a list of JournalEntry")

    @classmethod
    def answer_with(cls, request: Message, entries: list[dict[str, Any]], limit: int) -> Message:
        """The reply to `request` holding `entries` (journal rows as dicts, as recorded) in its payload. They are
        written as the journal holds them: one entry a reader cannot type must not make the record unreadable."""
        body = json.dumps(entries, separators=(",", ":"), allow_nan=False).encode()
        data = cls.from_data({"count": len(entries), "last_seq": entries[-1]["seq"] if entries else None,
                              "more": len(entries) >= limit, "media_type": "application/json"}).to_data()
        return request.reply(cls.TYPE, data, final=True, payload=body)

    @staticmethod
    def entries_of(message: Message) -> list[JournalEntry]:
        """The transcripts in a `transcripts` reply's payload; ReplyInvalid when there are none or they break
        the model."""
        if message.payload is None:
            raise ReplyInvalid("a 'transcripts' reply carries its transcripts in the payload, and this one has none")
        try:
            return _ENTRIES.validate_json(message.payload)
        except ValidationError as exc:
            raise ReplyInvalid(f"the 'transcripts' payload is not a list of journal entries: {exc}") from None


_ENTRIES = TypeAdapter(list[JournalEntry])


class AudioReply(OpenReply):
    """A chunk of speech in the payload (its format in the header); the final one carries the totals."""

    TYPE: ClassVar[str] = "audio"
    sentence: Int | None = Field(None, description="Piper: the sentence this chunk speaks (or a piece of), from 1")
    frames: Int | None = Field(None, description="SNAC: audio-token frames in this chunk (in all, when final)")
    duration_s: Float | None = Field(None, description="final: seconds of audio sent")
    sample_rate_hz: Int | None = Field(None, description="final: the audio's rate")
    sentences: Int | None = Field(None, description="final, Piper: sentences spoken")
    first_audio_ms: Float | None = Field(None, description="final: time to the first audio")


class CaptureReply(OpenReply):
    """Final: the answer to capture.mute and capture.unmute."""

    TYPE: ClassVar[str] = "capture"
    capture: Str = Field(description="`listening`, `muted` or `no_device`")
    muted: Bool = Field(description="muted by capture.mute")
    device: Str | None = Field(None, description="the configured audio device")


REPLIES: dict[str, type[Reply]] = {model.TYPE: model for model in (
    Pong, StatusReport, ProfileReply, ProfileDecision, Transcript, TranscriptsReply, AudioReply, CaptureReply,
    Alert, ErrorReply, CardsReply, CardReviewed, CardClosed, CardUpdate, CardSendReply, CardSendsReply)}


def read_reply(message: Message) -> Any:
    """The typed reply or event in `message`; None for a type tcccd does not define (a custom stage's own)."""
    if message.type == Alert.TYPE:
        return read_alert(message.data)
    model = REPLIES.get(message.type)
    return None if model is None else model.from_message(message)

