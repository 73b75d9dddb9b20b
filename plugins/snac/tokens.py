"""Orpheus audio tokens to SNAC codes: parsing, validation and codebook layout.

Orpheus speaks in `<custom_token_N>` tokens. The N at position i of the audio
stream carries code N - 10 - (i mod 7) * 4096, and every 7 codes make one SNAC
frame spread over three codebooks (1, 2 and 4 codes per frame). The layout is
done with numpy reshapes and slices, never a per-element Python loop: a loop
costs more than a tenth of a millisecond per frame, which adds up across every
decode window of a long utterance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from tcccd.kit.plugin import PluginError

TOKENS_PER_FRAME = 7
CODEBOOK_SIZE = 4096
AUDIO_TOKEN_OFFSET = 10
"""Custom tokens 0..9 are Orpheus control markers (start/end of speech, padding), not audio."""

_TOKEN_RE = re.compile(r"<custom_token_(\d+)>")
_PARTIAL_TAIL = "<custom_token_"
_CB1_COLUMNS = np.array([1, 4])
_CB2_COLUMNS = np.array([2, 3, 5, 6])
_OFFSET_TABLE_FRAMES = 4096
_OFFSETS = np.tile(AUDIO_TOKEN_OFFSET + np.arange(TOKENS_PER_FRAME, dtype=np.int64) * CODEBOOK_SIZE,
                   _OFFSET_TABLE_FRAMES + 1)
"""Token-to-code offsets for each stream position, computed once: slicing it beats arange + modulo per call."""


class TokenTextParser:
    """Pulls token numbers out of text that may arrive split at any character.

    A completions stream can cut `<custom_token_1234>` between two chunks, so the
    unfinished tail of one chunk is kept and prefixed to the next.
    """

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> list[int]:
        text = self._pending + text
        numbers: list[int] = []
        end = 0
        for match in _TOKEN_RE.finditer(text):
            numbers.append(int(match.group(1)))
            end = match.end()
        tail = text[end:]
        start = tail.rfind("<")
        self._pending = tail[start:] if start >= 0 and _could_be_token_start(tail[start:]) else ""
        return numbers


def _could_be_token_start(fragment: str) -> bool:
    if len(fragment) <= len(_PARTIAL_TAIL):
        return _PARTIAL_TAIL.startswith(fragment)
    return fragment.startswith(_PARTIAL_TAIL) and fragment[len(_PARTIAL_TAIL):].isdigit()


def audio_token_ids(numbers: Iterable[int]) -> np.ndarray:
    """The audio tokens among custom-token numbers, as int64; control markers dropped."""
    ids = np.fromiter(numbers, dtype=np.int64)
    return ids[ids >= AUDIO_TOKEN_OFFSET]


def tokens_to_codes(token_ids: np.ndarray, first_position: int) -> np.ndarray:
    """Codes for tokens that start at `first_position` of the audio stream.

    Raises PluginError naming the first bad token: a code outside the codebook
    means the language model drifted, and decoding it would be garbage audio.
    """
    phase = first_position % TOKENS_PER_FRAME
    if len(token_ids) <= len(_OFFSETS) - phase:
        offsets = _OFFSETS[phase: phase + len(token_ids)]
    else:
        offsets = AUDIO_TOKEN_OFFSET + (np.arange(len(token_ids)) + phase) % TOKENS_PER_FRAME * CODEBOOK_SIZE
    codes = token_ids - offsets
    if len(codes) and (codes.min() < 0 or codes.max() >= CODEBOOK_SIZE):
        bad = np.flatnonzero((codes < 0) | (codes >= CODEBOOK_SIZE))
        i = int(bad[0])
        pos = first_position + i
        low = AUDIO_TOKEN_OFFSET + (pos % TOKENS_PER_FRAME) * CODEBOOK_SIZE
        raise PluginError(
            f"audio token {int(token_ids[i])} at stream position {pos} gives code {int(codes[i])}, outside "
            f"0..{CODEBOOK_SIZE - 1}; at position {pos} (slot {pos % TOKENS_PER_FRAME} of 7) the accepted "
            f"tokens are {low}..{low + CODEBOOK_SIZE - 1} ({bad.size} bad token(s) in this message)",
            code="bad_tokens",
        )
    return codes


def split_codebooks(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whole frames of codes as SNAC's three codebooks, shapes (1, n), (1, 2n), (1, 4n)."""
    frames = codes[: len(codes) // TOKENS_PER_FRAME * TOKENS_PER_FRAME].reshape(-1, TOKENS_PER_FRAME)
    return (
        frames[:, 0].reshape(1, -1),
        frames[:, _CB1_COLUMNS].reshape(1, -1),
        frames[:, _CB2_COLUMNS].reshape(1, -1),
    )


def tokens_to_codebooks(token_ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token numbers of a whole utterance (from position 0) to codebooks; the benchmarked path."""
    ids = np.array(token_ids, dtype=np.int64)
    return split_codebooks(tokens_to_codes(ids, 0))


class CodeStream:
    """The codes of one request so far, growing as token messages arrive."""

    def __init__(self, initial_frames: int = 64) -> None:
        self._codes = np.empty(initial_frames * TOKENS_PER_FRAME, dtype=np.int64)
        self._count = 0

    @property
    def frames(self) -> int:
        return self._count // TOKENS_PER_FRAME

    def extend(self, token_ids: np.ndarray) -> None:
        codes = tokens_to_codes(token_ids, self._count)
        needed = self._count + len(codes)
        if needed > len(self._codes):
            grown = np.empty(max(needed, 2 * len(self._codes)), dtype=np.int64)
            grown[: self._count] = self._codes[: self._count]
            self._codes = grown
        self._codes[self._count: needed] = codes
        self._count = needed

    def window(self, first_frame: int, end_frame: int) -> np.ndarray:
        """The codes of frames [first_frame, end_frame) as stored (7 per frame): a view, valid until extend()."""
        return self._codes[first_frame * TOKENS_PER_FRAME: end_frame * TOKENS_PER_FRAME]

    def codebooks(self, first_frame: int, end_frame: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return split_codebooks(self.window(first_frame, end_frame))
