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
- `score`: several candidate continuations of one prefix, right-padded into one
  batch (the decoder is causal, so padding after a row changes nothing before it);
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

    def score(self, prefix: list[int], continuations: list[list[int]]) -> list[ForcedText]:
        """Every continuation's token log-probabilities after `prefix`, in one batched decoder pass."""
        if not continuations:
            return []
        width = len(prefix) + max(len(c) for c in continuations)
        rows = np.full((len(continuations), width), self.eot, dtype=np.int64)
        for k, continuation in enumerate(continuations):
            rows[k, : len(prefix) + len(continuation)] = prefix + continuation
        hidden = self.steps.hidden_states(self.audio, rows)
        start = len(prefix) - 1  # the hidden state at position i predicts token i + 1
        picked = np.concatenate([hidden[k, start: start + len(c)] for k, c in enumerate(continuations)])
        logprobs = log_softmax(self.steps.token_logits(np.ascontiguousarray(picked)).astype(np.float32))
        out, row = [], 0
        for continuation in continuations:
            block = logprobs[row: row + len(continuation)]
            out.append(_forced(continuation, block))
            row += len(continuation)
        return out

    def continue_word(self, prefix: list[int], first: int, max_tokens: int = 4) -> list[int]:
        """`first` and the tokens the decoder writes after it (greedy) until the next word or text ends."""
        return self.continue_greedy(prefix, first, lambda t, _: t >= self.eot or not self.word_piece(t), max_tokens)

    def continue_greedy(self, prefix: list[int], first: int, stop: Callable[[int, list[int]], bool],
                        max_tokens: int) -> list[int]:
        """`first` and what the decoder, unbiased and greedy, writes after it until `stop(token, written so far)`."""
        logits, cache = self.steps.begin(self.audio, [*prefix, first], [len(prefix)])
        tokens = [first]
        for _ in range(max_tokens - 1):
            token = int(logits[0].argmax())
            if stop(token, tokens):
                break
            tokens.append(token)
            logits, cache = self.steps.advance(self.audio, cache, np.array([token], dtype=np.int64))
        return tokens

    def align(self, start: list[int], text_tokens: list[int]) -> ForcedText:
        """openai's alignment pass: `start` (start-of-transcript, no-timestamps), the text, end of text.

        The returned tokens, log-probabilities and score rows cover the text tokens and the end of text.
        """
        tokens = [*start, *text_tokens, self.eot]
        hidden, scores = self.steps.aligned(self.audio, tokens)
        rows = slice(len(start) - 1, len(tokens) - 1)
        logprobs = log_softmax(self.steps.token_logits(np.ascontiguousarray(hidden[rows])).astype(np.float32))
        forced = _forced([*text_tokens, self.eot], logprobs)
        return ForcedText(forced.tokens, forced.logprobs, forced.alternatives, forced.alternative_logprobs,
                          scores[:, rows])


def _forced(tokens: list[int], logprobs: np.ndarray) -> ForcedText:
    index = np.arange(len(tokens))
    chosen = logprobs[index, tokens]
    others = logprobs.copy()
    others[index, tokens] = -np.inf
    best = others.argmax(axis=-1)
    return ForcedText(list(tokens), chosen, best, others[index, best])
