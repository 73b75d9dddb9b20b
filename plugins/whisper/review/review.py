"""From what Whisper heard to what the record says, one segment at a time, every rewrite proven by the audio.

Runs inside the transcriber's loop (DecodeOptions.review) while a window's
encoder output is still there, in this order for each segment:

1. vocabulary proposals (a run of heard words that sounds like a lexicon term,
   vocabulary.py) and, where the lexicon bias steered the beam, the unbiased
   decoder's own reading (bias_check.py), each checked against the audio
   (audio_check.py, margins in ReviewSettings);
2. numbers (numbers.py): a grouping the model did not write itself ("100 and
   10" -> 110, "0-9-15" -> 0915) is checked against the audio the same way; the
   medic's spelling ("1 g", "120/80", "92%") goes on top of an accepted reading;
3. one alignment pass over the window's final readings gives every word its
   time and probability (word_timing.py); words under `uncertain_below` are
   listed with the model's best alternative (word_spans.py), and so are
   numbers the audio does not tell from their twin, "fifteen" from "fifty"
   (number_twins.py).

Each segment keeps `heard` (the model's text) beside `text` (the record), the
applied rewrites with both audio scores, and the rejected ones (`considered`).
Without audio to ask (the ctranslate2 backend, partial results) only rewrites
that change no word are applied: the rest are listed as considered.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from tcccd.plugins.whisper.engine.forced import WindowEvidence
from tcccd.plugins.whisper.engine.repetition import has_word
from tcccd.plugins.whisper.review.audio_check import Proposal, Scorer, apply, check, scored_trail
from tcccd.plugins.whisper.review.number_forms import FormReading, NumberForms
from tcccd.plugins.whisper.review.number_twins import Doubt, doubts
from tcccd.plugins.whisper.review.numbers import inverse_normalize

OVERLAPPED = "overlaps a rewrite the audio supports better"


@dataclass(frozen=True)
class ReviewSettings:
    """Margins in nats of the segment's total log-probability, chosen on tests/data/asr/tune.txt only
    (bench/asr_review_tuning.py, on espeak-ng and Piper readings of it).

    vocabulary: right proposals scored -0.8 to -12.1 below the heard words (one at -18.8); wrong ones (FAST1,
    9-line, chest seal, 'turn the kit bag' -> Tourniquet, 'kilogram' -> 'per kilogram') -13.3 to -29.9. The margin
    keeps 3 nats from the best-scored wrong one: 10 (30 of 33 right accepted, 0 of 18 wrong).
    number: every grouping on tune was right or neutral, the lowest at -3.5: 4.
    bias: on tune the bias never chose a wrong term; its 30 terms scored up to 7.5 below the unbiased reading
    ('intraosseous' vs 'intraceus'): 8 keeps them all.
    uncertain: at most 5% of right words flagged: mean token probability under 0.3 flags 4.0% of right words
    and 20% of wrong ones (1127 right, 261 wrong).
    twin: 18 numbers with a sound-alike twin on tune, one a confusion (0950 heard for 'zero nine fifteen', its
    twin 0915 scored 1.25 below it); 3 nats past it: 4.25, which also doubts 3 right numbers (two 0915 at 2.8 and
    3.0, a '50 mg' at 3.7) and none of the 14 others (bench/asr_review_tuning.py).
    form: 3 numbers in a form nobody says on tune have a reading from their digits (bench/asr_form_tuning.py):
    '28th' -> 28 scored 0.48 above what was heard (right), 'zero 930' -> 0930 4.37 below (right), '0.515' -> 0515
    2.99 below (wrong: 'zero nine fifteen' was said). 3 nats short of the wrong one: 0 (from -0.01): a reading is
    written only where the audio supports it at least as well as the broken form.
    """

    vocabulary_margin_logprob: float = 10.0  # a term may score this much below the words it replaces
    number_margin_logprob: float = 4.0  # a number grouping ("110" for "100 and 10") likewise
    bias_margin_logprob: float = 8.0  # a term the bias chose may score this much below the unbiased reading
    uncertain_below: float = 0.3  # a word whose mean token probability is lower is listed in `uncertain`
    twin_margin_logprob: float = 4.25  # a number whose twin scores within this is listed in `uncertain`
    form_margin_logprob: float = 0.0  # a number in a form nobody says is written as its reading within this


@dataclass
class Decided:
    """One segment's decisions before its words are timed."""

    heard: str
    corrected: str  # heard with the accepted vocabulary (and unbiased) rewrites
    reading: str  # corrected with the accepted number groupings, in Whisper's digits (what gets aligned)
    text: str  # the record: corrected with the accepted numbers in the medic's spelling
    corrections: list[dict[str, Any]]
    numbers: list[dict[str, Any]]
    considered: list[dict[str, Any]]
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)  # (reading from, to, text from, to)
    twins: list[Doubt] = field(default_factory=list)  # numbers of `reading` the audio does not tell from a twin
    forms: list[FormReading] = field(default_factory=list)  # numbers in a form nobody says, spans of `reading`


class SegmentReviewer:
    """DecodeOptions.review for the whisper stage; also decides segments with no audio (`decide(heard, None)`)."""

    def __init__(self, tokenizer: Any, corrector: Any, write_numbers: bool, settings: ReviewSettings | None = None,
                 bias_check: Any = None) -> None:
        self.tokenizer = tokenizer
        self.corrector = corrector
        self.write_numbers = write_numbers
        self.settings = settings or ReviewSettings()
        self.bias_check = bias_check  # bias_check.BiasCheck, or None when the decoder is not biased
        self.margins = {"vocabulary": self.settings.vocabulary_margin_logprob,
                        "number": self.settings.number_margin_logprob,
                        "unbiased": -self.settings.bias_margin_logprob}
        self._phonemes = threading.Lock()  # espeak (the corrector's phonemizer) is not thread-safe
        self.forms = NumberForms(tokenizer, self.settings.form_margin_logprob, self.settings.twin_margin_logprob)

    def __call__(self, window: WindowEvidence) -> None:
        from tcccd.plugins.whisper.review.word_spans import segment_words, window_words

        decided = []
        for k, segment in enumerate(window.segments):
            scorer = self._scorer(window, k)
            unbiased = self.bias_check.proposals(scorer, segment.text.strip()) if self.bias_check else []
            decided.append(self.decide(segment.text, scorer, unbiased))
        timed = window_words(window, [d.reading if d else None for d in decided], self.tokenizer)
        for segment, one, words in zip(window.segments, decided, timed, strict=True):
            if one is not None:
                segment.review = segment_words(one, words, window, self.settings.uncertain_below, self.tokenizer,
                                               segment.start_s)

    def decide(self, heard: str, scorer: Scorer | None, unbiased: list[Proposal] | None = None) -> Decided | None:
        """None when `heard` holds no word ("." or "..." alone): nothing was said that the record could keep."""
        heard = heard.strip()
        if not has_word(heard):
            return None
        considered: list[dict[str, Any]] = []
        proposals = self._vocabulary(heard) + (unbiased or [])
        numbers = self._numbers(heard)
        verdicts = check(heard, proposals + numbers, scorer, self.margins)
        accepted = _without_overlaps([v for v in verdicts[: len(proposals)] if v.accepted])
        for v in verdicts[: len(proposals)]:
            if v not in accepted:
                considered.append(v.considered(heard) if not v.accepted else {**v.considered(heard),
                                                                               "reason": OVERLAPPED})
        corrected = apply(heard, [v.proposal for v in accepted])
        number_verdicts = verdicts[len(proposals):]
        if corrected != heard:
            number_verdicts = check(corrected, self._numbers(corrected), scorer, self.margins)
        considered += [v.considered(corrected) for v in number_verdicts if not v.accepted]
        taken = [v for v in number_verdicts if v.accepted]
        written = [scored_trail(v, "audio_logprob_heard", "audio_logprob_written") for v in taken]
        changes = [v.proposal for v in taken]
        forms = self.forms.read(apply(corrected, changes), scorer) if self.write_numbers else []
        form_changes = [_in_corrected(f, changes) for f in forms if f.written is not None]
        written += [{**p.trail, "start_char": p.start_char, "end_char": p.end_char} for p in form_changes]
        changes = sorted(changes + form_changes, key=lambda p: p.start_char)
        reading = apply(corrected, changes)
        text = apply(corrected, [Proposal("number", p.start_char, p.end_char, p.trail["written"]) for p in changes])
        spans = _reading_spans(changes)
        doubted = [_moved(f, forms) for f in forms if f.doubted]  # spans of the final reading
        corrections = [scored_trail(v, "audio_logprob_heard", "audio_logprob_term") for v in accepted]
        return Decided(heard, corrected, reading, text, corrections, written, considered, spans,
                       doubts(reading, scorer, self.settings.twin_margin_logprob), doubted)

    def _vocabulary(self, heard: str) -> list[Proposal]:
        if self.corrector is None:
            return []
        with self._phonemes:
            _, applied = self.corrector.apply(heard)
        return [Proposal("vocabulary", c.start_char, c.end_char, c.term, asdict(c)) for c in applied]

    def _numbers(self, text: str) -> list[Proposal]:
        if not self.write_numbers:
            return []
        return [Proposal("number", r.start_char, r.end_char, r.reading, asdict(r)) for r in inverse_normalize(text)[1]]

    def _scorer(self, window: WindowEvidence, k: int) -> SegmentScorer:
        return SegmentScorer(window, k, self.tokenizer)


class SegmentScorer:
    """Texts of segment k, teacher-forced in its window's context (what came before it, its closing timestamp);
    each text is scored once however many checks ask for it."""

    def __init__(self, window: WindowEvidence, k: int, tokenizer: Any) -> None:
        self.window = window
        self.prefix, self.closing = window.prefix(k), window.closing(k)
        self.tokenizer = tokenizer
        self._done: dict[str, Any] = {}

    def __call__(self, texts: list[str]) -> list[float]:
        return [f.total for f in self.forced(texts)]

    def tokens(self, text: str) -> list[int]:
        return self.tokenizer.encode(" " + text)

    def forced(self, texts: list[str]) -> list[Any]:
        """forced.ForcedText of each text (its tokens, then the closing timestamp)."""
        new = list(dict.fromkeys(t for t in texts if t not in self._done))
        rows = [self.tokens(t) + self.closing for t in new]
        self._done.update(zip(new, self.window.audio.score(self.prefix, rows), strict=True))
        return [self._done[t] for t in texts]


def without_words(decided: Decided | None) -> Any:
    """heard.Written of a segment decided with no audio at hand (no words to time)."""
    from tcccd.plugins.whisper.review.heard import Written

    if decided is None:
        return None
    return Written(decided.heard, decided.text, decided.corrections, decided.numbers, decided.considered)


def _without_overlaps(verdicts: list[Any]) -> list[Any]:
    """Accepted proposals never overlap: where two do, the one the audio supports more wins."""
    chosen: list[Any] = []
    for v in sorted(verdicts, key=lambda v: -(v.logprob_proposed or 0.0)):
        p = v.proposal
        if all(p.end_char <= q.proposal.start_char or q.proposal.end_char <= p.start_char for q in chosen):
            chosen.append(v)
    return sorted(chosen, key=lambda v: v.proposal.start_char)


def _moved(form: FormReading, forms: list[FormReading]) -> FormReading:
    """`form` (a span of the reading before any number read again was written) on the final reading's span."""
    shift = sum(len(f.replacement) - len(f.heard) for f in forms if f.start_char < form.start_char)
    return replace(form, start_char=form.start_char + shift, end_char=form.start_char + shift + len(form.replacement))


def _in_corrected(form: FormReading, changes: list[Proposal]) -> Proposal:
    """A number read again and written (number_forms.py; a span of the reading) as a change of the corrected
    text, with its audit entry."""
    shift = sum(len(p.replacement) - (p.end_char - p.start_char) for p in changes if p.start_char < form.start_char)
    trail = {"heard": form.heard, "written": form.replacement, "rule": "form", "reading": form.replacement,
             "audio_logprob_heard": round(form.logprob_heard, 3),
             "audio_logprob_written": next(round(lp, 3) for t, lp, _ in form.readings if t == form.written),
             "readings": _readings_trail(form)}
    return Proposal("number", form.start_char - shift, form.end_char - shift, form.replacement, trail)


def _readings_trail(form: FormReading) -> list[dict[str, Any]]:
    return [{"text": t, "audio_logprob": round(lp, 3), "source": source} for t, lp, source in form.readings]


def _reading_spans(taken: list[Proposal]) -> list[tuple[int, int, int, int]]:
    """Where each accepted number sits in the reading and in the text (both built from the same corrected text)."""
    spans, reading_shift, text_shift = [], 0, 0
    for p in sorted(taken, key=lambda q: q.start_char):
        written = p.trail["written"]
        spans.append((p.start_char + reading_shift, p.start_char + reading_shift + len(p.replacement),
                      p.start_char + text_shift, p.start_char + text_shift + len(written)))
        reading_shift += len(p.replacement) - (p.end_char - p.start_char)
        text_shift += len(written) - (p.end_char - p.start_char)
    return spans
