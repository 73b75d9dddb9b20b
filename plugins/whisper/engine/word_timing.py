"""Word timestamps and word probabilities, computed as openai-whisper and faster-whisper compute them.

The alignment pass (forced.WindowAudio.align) gives, for every text token, the
raw cross-attention scores of the model's alignment heads over the window's
audio positions (20 ms each). As in openai's `find_alignment`: softmax over the
positions that hold audio, z-score each head over the tokens, a median filter
of width 7 along time, the heads' mean, then dynamic time warping of tokens
against positions; a word starts where its first token's path starts. A
word's probability is the mean of its tokens' probabilities.

The DTW runs row by row in numpy: within a row, the "stay on this token"
moves form a running minimum (cost[j] = S[j] + min over k <= j of
(a[k] - S[k]), S the row's cumulative cost), so no Python loop over frames.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from tcccd.plugins.whisper.engine.forced import ForcedText

SECONDS_PER_POSITION = 0.02
MEDIAN_FILTER_WIDTH = 7
SENTENCE_END = ".!?"
_PUNCTUATION = set(string.punctuation)


@dataclass(frozen=True)
class TimedWord:
    """One word of the aligned text: its decoded text (leading space and punctuation kept) and token span."""

    text: str
    first_token: int  # index into the aligned text's tokens
    end_token: int
    start_s: float
    end_s: float
    probability: float


def median_filter(x: np.ndarray, width: int = MEDIAN_FILTER_WIDTH) -> np.ndarray:
    """Median along the last axis, reflect-padded (openai's median_filter)."""
    if x.shape[-1] <= width // 2:
        return x
    pad = width // 2
    padded = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)], mode="reflect")
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, width, axis=-1), axis=-1)


def dtw(cost_matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Monotonic path of least cost through [tokens, positions]: (token index, position index) per step."""
    n, m = cost_matrix.shape
    cost = np.full((n + 1, m + 1), np.inf)
    cost[0, 0] = 0.0
    trace = np.full((n + 1, m + 1), 2, dtype=np.int8)
    trace[1:, 0] = 1
    for i in range(1, n + 1):
        x = cost_matrix[i - 1].astype(np.float64)
        diagonal, up = cost[i - 1, :-1], cost[i - 1, 1:]
        entry = x + np.minimum(diagonal, up)  # arriving at (i, j) from the row above
        cumulative = np.concatenate([[0.0], np.cumsum(x)])
        cost[i, 1:] = cumulative[1:] + np.minimum.accumulate(entry - cumulative[1:])
        left = cost[i, :-1]
        # openai's preference (diagonal, then up, each only when strictly least; else left), except that a tie
        # above that is less than left takes the diagonal: the step must be the one the cost came from
        above = np.where(up < diagonal, 1, 0)
        trace[i, 1:] = np.where(np.minimum(diagonal, up) < left, above, 2)
    path = []
    i, j = n, m
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        step = trace[i, j] if i > 0 and j > 0 else (1 if j == 0 else 2)
        i, j = (i - 1, j - 1) if step == 0 else (i - 1, j) if step == 1 else (i, j - 1)
    path.reverse()
    indices = np.array(path, dtype=np.int64).reshape(-1, 2)
    return indices[:, 0], indices[:, 1]


def split_words(pieces: list[str]) -> list[tuple[int, int]]:
    """Token ranges of words: a word starts at a token that begins with a space or is punctuation (openai's
    split_tokens_on_spaces); the last piece (end of text) is a word of its own."""
    ranges: list[tuple[int, int]] = []
    for k, piece in enumerate(pieces):
        starts = not ranges or piece.startswith(" ") or piece.strip() in _PUNCTUATION or k == len(pieces) - 1
        if starts:
            ranges.append((k, k + 1))
        else:
            ranges[-1] = (ranges[-1][0], k + 1)
    return ranges


def time_words(forced: ForcedText, pieces: list[str], audio_positions: int) -> list[TimedWord]:
    """Words of the aligned text (pieces: each text token's decoded text; forced covers them and end of text)."""
    if not pieces or forced.scores is None or audio_positions < 1:
        return []
    scores = forced.scores[:, :, :audio_positions].astype(np.float64)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    std = weights.std(axis=-2, keepdims=True)
    weights = (weights - weights.mean(axis=-2, keepdims=True)) / np.where(std > 0, std, 1.0)
    # the heads' mean of their filtered weights, one head at a time: the running median's windows are a copy
    # MEDIAN_FILTER_WIDTH times the input, 150 MB for all 8 heads of a full window of text at once
    matrix = sum(median_filter(head) for head in weights) / len(weights)
    token_index, position_index = dtw(-matrix)
    jumps = np.concatenate([[True], np.diff(token_index) > 0])
    jump_s = position_index[jumps] * SECONDS_PER_POSITION  # where each token's path starts
    probabilities = np.exp(forced.logprobs)
    words = []
    for first, end in split_words([*pieces, ""])[:-1]:
        words.append(TimedWord("".join(pieces[first:end]), first, end, float(jump_s[first]),
                               float(jump_s[min(end, len(jump_s) - 1)]), float(probabilities[first:end].mean())))
    return _merge_punctuation(_clip_sentence_ends(words))


def _clip_sentence_ends(words: list[TimedWord]) -> list[TimedWord]:
    """faster-whisper's fix: a word at a sentence boundary is not longer than twice the median word."""
    durations = np.array([w.end_s - w.start_s for w in words])
    durations = durations[durations > 0]
    if not len(durations):
        return words
    longest = 2 * min(0.7, float(np.median(durations)))
    out = list(words)
    for k in range(1, len(out)):
        word = out[k]
        if word.end_s - word.start_s <= longest:
            continue
        if word.text.strip() and word.text.strip()[-1] in SENTENCE_END:
            out[k] = _timed(word, word.start_s, word.start_s + longest)
        elif out[k - 1].text.strip() and out[k - 1].text.strip()[-1] in SENTENCE_END:
            out[k] = _timed(word, word.end_s - longest, word.end_s)
    return out


def _merge_punctuation(words: list[TimedWord]) -> list[TimedWord]:
    """A token that is only punctuation joins the word before it (its time and probability stay the word's)."""
    out: list[TimedWord] = []
    for word in words:
        if out and word.text.strip() and all(ch in _PUNCTUATION for ch in word.text.strip()):
            last = out[-1]
            out[-1] = TimedWord(last.text + word.text, last.first_token, word.end_token, last.start_s, last.end_s,
                                last.probability)
        else:
            out.append(word)
    return out


def _timed(word: TimedWord, start_s: float, end_s: float) -> TimedWord:
    return TimedWord(word.text, word.first_token, word.end_token, start_s, end_s, word.probability)
