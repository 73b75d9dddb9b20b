"""Catching a decoder loop: openai's signals (compression ratio, a token tail that repeats), and the short-text
test for where the compression ratio is blind.

On a 3 s utterance tiny.en can write "at 0.515, 2015, 2015, 2015, ..." or say
the whole sentence twice, confidently (avg_logprob -0.8), in too few characters
for zlib to notice. People do repeat themselves ("check, check, check"), so a
unit of one or two words may follow itself up to three times. A loop is a
reason to decode again at a higher temperature, as openai does for a high
compression ratio; text that every attempt repeats is never emitted
(window_policy drops and reports it).
"""

from __future__ import annotations

import re
import zlib

_WORD = re.compile(r"[\w'.]+")
_WORD_CHAR = re.compile(r"\w")


def has_word(text: str) -> bool:
    """Anything but punctuation: "." or "..." alone is no word heard."""
    return _WORD_CHAR.search(text) is not None


def words(text: str) -> list[str]:
    return [w.strip(".").lower() for w in _WORD.findall(text) if w.strip(".")]


def looped(text: str, max_short_repeats: int = 3, long_unit_words: int = 3) -> bool:
    """True when some unit of words follows itself back to back more than a speaker would.

    A unit of 1-2 words may occur up to `max_short_repeats` times in a row ("check, check, check");
    a unit of `long_unit_words` or more words may not occur twice in a row.
    """
    seq = words(text)
    for size in range(1, len(seq) // 2 + 1):
        allowed = max_short_repeats if size < long_unit_words else 1
        for start in range(len(seq) - size):
            unit = seq[start:start + size]
            count = 1
            while seq[start + count * size: start + (count + 1) * size] == unit:
                count += 1
            if count > allowed:
                return True
    return False


def compression_ratio(text: str) -> float:
    """openai's looping signal: repeated text compresses well."""
    raw = text.encode("utf-8")
    return len(raw) / len(zlib.compress(raw)) if raw else 0.0


def is_repetitive(tokens: list[int], text: str, eot: int) -> bool:
    """A decoding loop: the token tail repeats, or words follow themselves back to back (short text)."""
    return repeats_at_tail(tokens, text_below=eot) or looped(text)


def repeats_at_tail(tokens: list[int], min_repeats: int = 3, min_span: int = 12, text_below: int = 50257) -> bool:
    """True when the text ends in one n-gram repeated back to back (a decoding loop).

    Timestamp and special tokens (ids >= text_below) are ignored: a looping model
    restarts the same sentence between ever larger timestamps.
    """
    tokens = [t for t in tokens if t < text_below]
    for period in range(1, len(tokens) // min_repeats + 1):
        repeats = 1
        while (repeats + 1) * period <= len(tokens) and \
                tokens[-(repeats + 1) * period: -repeats * period] == tokens[-period:]:
            repeats += 1
        if repeats >= min_repeats and repeats * period >= min_span:
            return True
    return False
