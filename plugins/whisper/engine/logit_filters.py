"""Every rule that edits a decoder step's logits before a token is chosen: openai-whisper's blank and token
suppression, the service's logits processors (vocabulary biasing), then the timestamp rules, in openai's order so
biasing can never break the timestamp structure."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tcccd.plugins.whisper.engine.sampling import log_softmax, logsumexp

if TYPE_CHECKING:
    from tcccd.plugins.whisper.engine.decoding import DecodeOptions
    from tcccd.plugins.whisper.engine.tokenizer import Tokenizer

MAX_INITIAL_TIMESTAMP_S = 1.0
SECONDS_PER_TIMESTAMP = 0.02


class LogitFilters:
    """Every rule that edits logits before a token is chosen, in openai's order."""

    def __init__(self, tokenizer: Tokenizer, options: DecodeOptions, suppress: tuple[int, ...],
                 sample_begin: int, max_timestamp_index: int) -> None:
        self.tok = tokenizer
        self.options = options
        self.sample_begin = sample_begin
        self.max_timestamp_index = max_timestamp_index
        self.suppress = np.array(sorted(set(suppress)), dtype=np.int64)
        self.blank = np.array(tokenizer.encode(" ") + [tokenizer.eot], dtype=np.int64)

    def check(self) -> None:
        """Let the caller abandon the decode (options.check raises) between steps."""
        if self.options.check is not None:
            self.options.check()

    def __call__(self, tokens: np.ndarray, logits: np.ndarray, token_lists: list[list[int]]) -> None:
        if self.options.suppress_blank and tokens.shape[1] == self.sample_begin:
            logits[:, self.blank] = -float("inf")
        logits[:, self.suppress] = -float("inf")
        for processor in self.options.logits_processors:
            processor(tokens, logits)
        if not self.options.without_timestamps:
            self._timestamp_rules(logits, token_lists)

    def _timestamp_rules(self, logits: np.ndarray, token_lists: list[list[int]]) -> None:
        """openai's ApplyTimestampRules, plus an end: no timestamp past the audio, and eot once one reaches it.

        The addition matters with a truncated audio context: without it the model,
        having closed a segment at the end of what it sees, starts the utterance again.
        """
        begin, eot = self.tok.timestamp_begin, self.tok.eot
        last_allowed = begin + self.max_timestamp_index
        logits[:, self.tok.no_timestamps] = -float("inf")
        logits[:, last_allowed + 1:] = -float("inf")
        ended = []
        for k, seq in enumerate(token_lists):
            sampled = seq[self.sample_begin:]
            last_ts = len(sampled) >= 1 and sampled[-1] >= begin
            penultimate_ts = len(sampled) < 2 or sampled[-2] >= begin
            if last_ts:
                if penultimate_ts:
                    logits[k, begin:] = -float("inf")
                else:
                    logits[k, :eot] = -float("inf")
                    if sampled[-1] >= last_allowed:
                        ended.append(k)
            stamps = [t for t in sampled if t >= begin]
            if stamps:
                floor = stamps[-1] if last_ts and not penultimate_ts else stamps[-1] + 1
                logits[k, begin:floor] = -float("inf")
        if len(token_lists[0]) == self.sample_begin:
            logits[:, :begin] = -float("inf")
            first_allowed = begin + round(MAX_INITIAL_TIMESTAMP_S / SECONDS_PER_TIMESTAMP)
            logits[:, first_allowed + 1:] = -float("inf")
        logprobs = log_softmax(logits)
        timestamp_lp = logsumexp(logprobs[:, begin:])
        text_lp = logprobs[:, :begin].max(axis=-1)
        logits[timestamp_lp > text_lp, :begin] = -np.inf
        for k in ended:
            logits[k] = -float("inf")
            logits[k, eot] = 0.0
