"""Asking the decoder how well a window's audio supports a given text: teacher forcing on the encoder output.

Beam search asks "what is the most likely text?"; a rewrite after it asks a
different question: "does the audio support this text at least as well as
what was heard?". The decoder answers it directly: fed a token sequence (the
window's start tokens and a candidate text), one pass gives the
log-probability of every token given the audio and the tokens before it. The
encoder output is the window's own, already computed, so a check costs a
decoder pass (a few milliseconds on tiny.en), never an encoder pass.

Two passes are offered over a StepDecoder that supports them (onnx_decoder's
OnnxSteps, torch_steps' TorchSteps; the ctranslate2 backend has none):
- `score`: several candidate continuations of one prefix, right-padded into
  batches (the decoder is causal, so padding after a row changes nothing before it);
- `align`: openai's find_alignment pass (start tokens, no timestamps, the text,
  end of text), giving each token's probability and the alignment heads'
  attention for word timestamps (word_timing.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcccd.plugins.whisper.engine.sampling import log_softmax

LOGIT_ROWS = 64  # rows of [vocab] logits held at once by a teacher-forced pass (64 x 51864 floats: 13 MB)
SCORE_BATCH = 8  # candidate texts per decoder pass: each row's cross-attention is [heads, tokens, 1500] a layer


@dataclass(frozen=True)
class WindowEvidence:
    """One kept window, handed to DecodeOptions.review while its encoder output is alive."""

    audio: WindowAudio
    start: list[int]  # the decode's start tokens (previous text prompt, start of transcript)
    tokens: list[int]  # what the decoder wrote, timestamps included
    segments: list[Any]  # transcriber.Segment, each a slice of `tokens`
    first_tokens: list[int]  # where each segment's tokens begin in `tokens`
    audio_positions: int  # encoder positions (20 ms) that hold the window's audio
    offset_s: float  # where the window starts in the transcribed audio

    def prefix(self, k: int) -> list[int]:
        """Everything the decoder read before segment k's text: start tokens, earlier segments, its timestamp."""
        segment = self.segments[k].tokens
        lead = next((i for i, t in enumerate(segment) if t < self.audio.eot), len(segment))
        return [*self.start, *self.tokens[: self.first_tokens[k]], *segment[:lead]]

    def closing(self, k: int) -> list[int]:
        """The timestamp tokens that end segment k (scored after every candidate text)."""
        segment = self.segments[k].tokens
        tail = len(segment)
        while tail > 0 and segment[tail - 1] >= self.audio.eot:
            tail -= 1
        return segment[tail:] if tail > 0 else []


def can_force(engine: Any) -> bool:
    """Whether this engine's decoder can be teacher-forced (the torch and ONNX decoders; not ctranslate2)."""
    steps = getattr(engine, "steps", None)
    return steps is not None and hasattr(steps, "hidden_states") and hasattr(steps, "aligned")


@dataclass(frozen=True)
class ForcedText:
    """What one teacher-forced pass over a text gave."""

    tokens: list[int]  # the text's tokens
    logprobs: np.ndarray  # [len(tokens)] log-probability of each
    alternatives: np.ndarray  # [len(tokens)] at each position, the most likely token other than the one forced
    alternative_logprobs: np.ndarray  # [len(tokens)] their log-probabilities
    scores: np.ndarray | None = None  # alignment heads' raw scores [heads, rows, positions] (align only)

    @property
    def total(self) -> float:
        return float(self.logprobs.sum())


class WindowAudio:
    """One window's prepared audio (cross-attention keys/values) and the decoder that reads it."""

    def __init__(self, steps: Any, audio: Any, eot: int, word_piece: Any = None) -> None:
        self.steps = steps
        self.audio = audio
        self.eot = eot
        self.word_piece = word_piece  # token -> True when it continues the word before it (no space, a letter)
        self._read: list[tuple[list[int], list[np.ndarray]]] = []  # texts already read, with their caches

    def score(self, prefix: list[int], continuations: list[list[int]]) -> list[ForcedText]:
        """Every continuation's token log-probabilities after `prefix`, SCORE_BATCH of them per decoder pass."""
        if not continuations:
            return []
        picked = []
        for first in range(0, len(continuations), SCORE_BATCH):
            picked += self._hidden(prefix, continuations[first: first + SCORE_BATCH])
        forced = _forced(self.steps, np.concatenate(picked), [t for c in continuations for t in c])
        out, row = [], 0
        for continuation in continuations:
            part = slice(row, row + len(continuation))
            out.append(ForcedText(list(continuation), forced.logprobs[part], forced.alternatives[part],
                                  forced.alternative_logprobs[part]))
            row += len(continuation)
        return out

    def _hidden(self, prefix: list[int], batch: list[list[int]]) -> list[np.ndarray]:
        """For each continuation, the hidden states that predict its tokens (the first from the prefix's last)."""
        if hasattr(self.steps, "hidden_after"):  # the prefix read once, its cache shared (onnx_decoder.py)
            rows = np.full((len(batch), max(len(c) for c in batch)), self.eot, dtype=np.int64)
            for k, continuation in enumerate(batch):
                rows[k, : len(continuation)] = continuation
            last, hidden, cache = self.steps.hidden_after(self.audio, prefix, rows)
            self._read += [([*prefix, *c], [layer[k: k + 1] for layer in cache]) for k, c in enumerate(batch)]
            return [np.concatenate([last[None], hidden[k, : len(c) - 1]]) for k, c in enumerate(batch)]
        start = len(prefix) - 1  # the hidden state at position i predicts token i + 1
        rows = np.full((len(batch), len(prefix) + max(len(c) for c in batch)), self.eot, dtype=np.int64)
        for k, continuation in enumerate(batch):
            rows[k, : len(prefix) + len(continuation)] = prefix + continuation
        hidden = self.steps.hidden_states(self.audio, rows)
        return [hidden[k, start: start + len(c)] for k, c in enumerate(batch)]

    def continue_word(self, prefix: list[int], first: int, max_tokens: int = 4) -> list[int]:
        """`first` and the tokens the decoder writes after it (greedy) until the next word or text ends."""
        return self.continue_greedy(prefix, first, lambda t, _: t >= self.eot or not self.word_piece(t), max_tokens)

    def continue_greedy(self, prefix: list[int], first: int, stop: Callable[[int, list[int]], bool],
                        max_tokens: int) -> list[int]:
        """`first` and what the decoder, unbiased and greedy, writes after it until `stop(token, written so far)`."""
        cache = self._cache_of(prefix)
        if cache is None:
            logits, cache = self.steps.begin(self.audio, [*prefix, first], [len(prefix)])
        else:  # the prefix was read already (a score or the alignment pass): one step from its cache
            logits, cache = self.steps.advance(self.audio, cache, np.array([first], dtype=np.int64))
        tokens = [first]
        for _ in range(max_tokens - 1):
            token = int(logits[0].argmax())
            if stop(token, tokens):
                break
            tokens.append(token)
            logits, cache = self.steps.advance(self.audio, cache, np.array([token], dtype=np.int64))
        return tokens

    def _cache_of(self, prefix: list[int]) -> list[np.ndarray] | None:
        """The self-attention cache of `prefix` where a text already read starts with it (its first positions:
        the decoder is causal, so they are the numbers reading `prefix` alone gives)."""
        for tokens, cache in self._read:
            if len(tokens) >= len(prefix) and tokens[: len(prefix)] == prefix:
                return [np.ascontiguousarray(layer[:, :, : len(prefix)]) for layer in cache]
        return None

    def continue_among(self, prefix: list[int], allowed: Callable[[int], np.ndarray],
                       stop: Callable[[list[int]], bool], max_tokens: int) -> list[int]:
        """What the decoder, greedy, writes after `prefix` when only `allowed(step)` token ids may come at each
        step, until `stop(written so far)`: its own reading of the audio in a form the caller needs (digits)."""
        cache = self._cache_of(prefix[:-1])
        if cache is None:
            logits, cache = self.steps.begin(self.audio, prefix, [len(prefix) - 1])
        else:  # all but the prefix's last token read already: one step from that cache
            logits, cache = self.steps.advance(self.audio, cache, np.array(prefix[-1:], dtype=np.int64))
        tokens: list[int] = []
        for step in range(max_tokens):
            ids = allowed(step)
            token = int(ids[logits[0, ids].argmax()])
            tokens.append(token)
            if stop(tokens):
                break
            logits, cache = self.steps.advance(self.audio, cache, np.array([token], dtype=np.int64))
        return tokens

    def align(self, start: list[int], text_tokens: list[int]) -> ForcedText:
        """openai's alignment pass: `start` (start-of-transcript, no-timestamps), the text, end of text.

        The returned tokens, log-probabilities and score rows cover the text tokens and the end of text.
        """
        tokens = [*start, *text_tokens, self.eot]
        if hasattr(self.steps, "aligned_cached"):
            hidden, scores, cache = self.steps.aligned_cached(self.audio, tokens)
            self._read.append((tokens, cache))
        else:
            hidden, scores = self.steps.aligned(self.audio, tokens)
        rows = slice(len(start) - 1, len(tokens) - 1)
        forced = _forced(self.steps, hidden[rows], [*text_tokens, self.eot])
        return ForcedText(forced.tokens, forced.logprobs, forced.alternatives, forced.alternative_logprobs,
                          scores[:, rows])


def _forced(steps: Any, hidden: np.ndarray, tokens: list[int]) -> ForcedText:
    """Each row's forced token's log-probability and the best other token, LOGIT_ROWS rows of the vocabulary at
    a time: scoring a dozen candidates of a long segment held ~1000 rows x 51864 floats three times over."""
    chosen, best, best_logprobs, at = [], [], [], 0
    for logits in steps.logits_chunks(np.ascontiguousarray(hidden), LOGIT_ROWS):
        logprobs = log_softmax(logits.astype(np.float32, copy=False))
        index, forced = np.arange(len(logprobs)), np.asarray(tokens[at: at + len(logprobs)])
        chosen.append(logprobs[index, forced])
        logprobs[index, forced] = -np.inf
        best.append(logprobs.argmax(axis=-1))
        best_logprobs.append(logprobs[index, best[-1]])
        at += len(logprobs)
    if not chosen:
        empty = np.zeros(0, np.float32)
        return ForcedText([], empty, np.zeros(0, np.int64), empty)
    return ForcedText(list(tokens), np.concatenate(chosen), np.concatenate(best), np.concatenate(best_logprobs))
