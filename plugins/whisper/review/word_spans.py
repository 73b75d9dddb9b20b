"""Each segment's words on the record: their characters in `text`, their time in the audio, how sure the model was.

One alignment pass per window (forced.WindowAudio.align) reads every segment's
final reading (the text in Whisper's own digits, which the decoder can judge:
"1 gram of" rather than the record's "1 g"); word_timing.py turns it into timed
words with probabilities. Each word is then placed in its segment's `text`:
words inside a number the medic's spelling rewrote ("120 over 80" -> "120/80")
become one word there, with the earliest start, the latest end and the lowest
probability of the words it came from.

A word under the threshold goes into `uncertain`, with the model's best other
reading at that point (the most likely other first token, completed greedily
to a whole word), so a tablet can ask the medic and the casualty card can
leave the field open rather than guess. So does a number the audio does not
tell from its twin ("fifteen", "fifty": number_twins.py), whatever its
probability, with the twin (in the record's spelling where the number shows
in it: "15 mg" for "50 mg") and both audio scores.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from tcccd.plugins.whisper.engine.forced import ForcedText, WindowEvidence
from tcccd.plugins.whisper.engine.word_timing import TimedWord, time_words
from tcccd.plugins.whisper.review.heard import Written
from tcccd.plugins.whisper.review.number_twins import Doubt

_STRIP = string.whitespace + string.punctuation


@dataclass(frozen=True)
class ReadWord:
    """A timed word of one segment's reading: characters [start_char, end_char) of the reading."""

    timed: TimedWord
    start_char: int
    end_char: int
    alternative_token: int
    prefix: list[int]  # the alignment pass' tokens before the word (to complete the alternative)


def window_words(window: WindowEvidence, readings: list[str | None], tokenizer: Any) -> list[list[ReadWord]]:
    """The timed words of every segment's reading (an empty list for a segment without one)."""
    per_segment = [tokenizer.encode(" " + r) if r else [] for r in readings]
    tokens = [t for seg in per_segment for t in seg]
    out: list[list[ReadWord]] = [[] for _ in readings]
    if not tokens:
        return out
    start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
    forced = window.audio.align(start, tokens)
    pieces = [tokenizer.decode([t]) for t in tokens]
    bounds = [sum(len(s) for s in per_segment[:k]) for k in range(len(per_segment) + 1)]
    for word in time_words(forced, pieces, window.audio_positions):
        k = next(i for i in range(len(per_segment)) if bounds[i] <= word.first_token < bounds[i + 1])
        before = len(tokenizer.decode(tokens[bounds[k]: word.first_token])) - 1  # the reading has no leading space
        text = tokenizer.decode(tokens[word.first_token: word.end_token])
        out[k].append(ReadWord(word, max(0, before), before + len(text), _alternative(forced, word),
                               [*start, *tokens[: word.first_token]]))
    return out


def _alternative(forced: ForcedText, word: TimedWord) -> int:
    return int(forced.alternatives[word.first_token])


def segment_words(decided: Any, words: list[ReadWord], window: WindowEvidence, uncertain_below: float,
                  tokenizer: Any, segment_start_s: float = 0.0) -> Written:
    """review.Decided + its timed words -> the segment's record (text, audit trail, words, uncertain).

    The first word starts no earlier than the segment's own start timestamp: the alignment's path begins at the
    window's first position whatever was said there, so its first word would otherwise cover any speech the
    decoder skipped before it, and the coverage check (coverage.py) could never see it."""
    placed: dict[tuple[int, int], dict[str, Any]] = {}
    sources: dict[tuple[int, int], ReadWord] = {}
    twins: dict[tuple[int, int], Doubt] = {}
    forms: dict[tuple[int, int], Any] = {}
    for word in words:
        core = _core(decided.reading, word.start_char, word.end_char)
        if core is None:
            continue
        twin = next((d for d in decided.twins if d.start_char < core[1] and core[0] < d.end_char), None)
        form = next((f for f in decided.forms if f.start_char < core[1] and core[0] < f.end_char), None)
        span = _trimmed(decided.text, _in_text(core, decided.spans))
        entry = {"text": decided.text[span[0]:span[1]], "start_s": round(window.offset_s + word.timed.start_s, 3),
                 "end_s": round(window.offset_s + word.timed.end_s, 3),
                 "probability": round(word.timed.probability, 4), "start_char": span[0], "end_char": span[1]}
        if span in placed:  # one written number from several words of the reading
            old = placed[span]
            entry["start_s"], entry["end_s"] = min(old["start_s"], entry["start_s"]), max(old["end_s"], entry["end_s"])
            entry["probability"] = min(old["probability"], entry["probability"])
            if entry["probability"] == old["probability"]:
                word = sources[span]
        placed[span], sources[span] = entry, word
        if twin is not None:
            twins[span] = twin
        if form is not None:
            forms[span] = form
    ordered = [placed[s] for s in sorted(placed)]
    if ordered:
        first = ordered[0]
        first["start_s"] = min(max(first["start_s"], round(segment_start_s, 3)), first["end_s"])
    uncertain = [_doubted(e, window, sources[(e["start_char"], e["end_char"])],
                          twins.get((e["start_char"], e["end_char"])), tokenizer)
                 | _readings(forms.get((e["start_char"], e["end_char"])))
                 for e in ordered
                 if e["probability"] < uncertain_below or (e["start_char"], e["end_char"]) in twins | forms]
    return Written(decided.heard, decided.text, decided.corrections, decided.numbers, decided.considered,
                   ordered, uncertain)


def _doubted(entry: dict[str, Any], window: WindowEvidence, word: ReadWord, twin: Doubt | None,
             tokenizer: Any) -> dict[str, Any]:
    """A word's `uncertain` entry: the model's best other word, and the number's twin when that is the doubt."""
    doubt = {"text": entry["text"], "start_char": entry["start_char"], "end_char": entry["end_char"],
             "probability": entry["probability"],
             "alternative": _alternative_word(window, word, entry["text"], tokenizer)}
    if twin is not None:
        written = entry["text"].replace(twin.heard, twin.twin) if entry["text"].count(twin.heard) == 1 else twin.twin
        doubt |= {"twin": written, "audio_logprob_heard": round(twin.logprob_heard, 3),
                  "audio_logprob_twin": round(twin.logprob_twin, 3)}
    return doubt


def _readings(form: Any) -> dict[str, Any]:
    """A number in a form nobody says (number_forms.py): every reading the audio scored, best first."""
    if form is None:
        return {}
    return {"readings": [{"text": t, "audio_logprob": round(lp, 3), "source": source}
                         for t, lp, source in form.readings],
            "audio_logprob_heard": round(form.logprob_heard, 3)}


def _core(reading: str, start: int, end: int) -> tuple[int, int] | None:
    """The word without the spaces and punctuation around it; None for punctuation alone."""
    piece = reading[start:end]
    left = len(piece) - len(piece.lstrip(_STRIP))
    right = len(piece.rstrip(_STRIP))
    return (start + left, start + right) if right > left else None


def _in_text(span: tuple[int, int], numbers: list[tuple[int, int, int, int]]) -> tuple[int, int]:
    """A reading span's place in the text: a number's whole written span, or shifted past the numbers before it."""
    shift = 0
    for reading_from, reading_to, text_from, text_to in numbers:
        if span[0] < reading_to and reading_from < span[1]:
            return text_from, text_to
        if reading_to <= span[0]:
            shift += (text_to - text_from) - (reading_to - reading_from)
    return span[0] + shift, span[1] + shift


def _trimmed(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """A written number may end in a space ("1 g " before the drug): the word's span does not."""
    start, end = span
    while end > start and text[end - 1].isspace():
        end -= 1
    while start < end and text[start].isspace():
        start += 1
    return start, end


def _alternative_word(window: WindowEvidence, word: ReadWord, said: str, tokenizer: Any) -> str | None:
    """The model's best other word at this point, or None when it has none (punctuation, the same word)."""
    if word.alternative_token >= tokenizer.eot:
        return None
    tokens = window.audio.continue_word(word.prefix, word.alternative_token)
    text = tokenizer.decode(tokens).strip(_STRIP)
    return text if text and text.lower() != said.lower().strip(_STRIP) else None
