"""Decoding one 30 s window: greedy, sampling and beam search, in numpy over any StepDecoder.

Follows openai-whisper's rules (suppressed tokens, blank suppression,
ApplyTimestampRules, no-speech probability at the SOT position, sum-logprob /
length ranking) so transcripts and the silence/hallucination signals mean the
same as in openai's transcribe. The service side plugs vocabulary biasing in
through `logits_processors`, applied before the timestamp rules so biasing can
never break the timestamp structure.

The search is numpy over a StepDecoder (step_decoder.py: torch or ONNX Runtime). Sampling draws
from a generator that reproduces torch's seeded CPU generator (sampling.py), so a temperature
fallback samples what it sampled when this loop ran on torch tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tcccd.plugins.whisper.engine.logit_filters import SECONDS_PER_TIMESTAMP, LogitFilters
from tcccd.plugins.whisper.engine.repetition import compression_ratio, is_repetitive, repeats_at_tail
from tcccd.plugins.whisper.engine.sampling import TorchCompatibleRandom, draw, log_softmax, softmax, top
from tcccd.plugins.whisper.engine.step_decoder import LogitsProcessor, StepDecoder

if TYPE_CHECKING:
    from tcccd.plugins.whisper.engine.tokenizer import Tokenizer

# Token budget of a window: a babbling hypothesis (sampling at temperature 1 on a 1.6 s clip) otherwise runs to
# 224 tokens; 6.3 s of the 7.8 s "TXA given" took. Held-out clips measured 2-4 tokens per second (beam 5).
MIN_TOKENS_PER_WINDOW = 32
MAX_TOKENS_PER_S = 15


@dataclass
class DecodeOptions:
    beam_size: int = 5  # 1 = greedy; at temperature > 0 the number of samples (openai's best_of)
    temperatures: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # fallback schedule
    without_timestamps: bool = False
    suppress_blank: bool = True
    suppress_tokens: tuple[int, ...] | None = None  # None = the model's default set
    no_speech_threshold: float = 0.6
    logprob_threshold: float = -1.0
    compression_ratio_threshold: float = 2.4
    prompt: str | None = None
    logits_processors: tuple[LogitsProcessor, ...] = ()
    # "full": the 30 s window the model was trained on. "auto": only the frames holding audio (+ 1 s), ~7x less
    # encoder work, but on real voices it made tiny.en loop ("20. 20. 20. ...") or drop sentences; window_policy
    # decodes such a window again with the full window, so "auto" can only save time, never words.
    audio_context: str = "full"
    condition_on_previous_text: bool = True  # long audio: prompt each window with the previous window's text
    # Beyond openai: this sure of "no speech", the window is silent however confident the text (tiny.en says
    # "you" over digital silence with avg_logprob -0.7 and no_speech_prob 0.95; speech measured 0.02-0.2).
    no_speech_hard_threshold: float = 0.8
    # Beyond openai: a window whose best attempt, after every fallback, still averages below this log-probability
    # is babble (measured: -3.24 on a 0.7 s tail after all six temperatures) and is dropped, not transcribed.
    min_avg_logprob: float = -2.0
    # Temperature fallback samples from a generator seeded per window from this: the same audio gives the same
    # record (a medical record must be reproducible), and a window's text never depends on what came before it.
    seed: int = 0
    # Called between windows and between decoder steps; raises to abandon the work (a cancelled request, or one
    # past its deadline: tcccd's PluginContext.check_cancelled), so a long file stops instead of running on.
    check: Callable[[], None] | None = None
    # Called with each kept window's forced.WindowEvidence while its encoder output is still there (engines whose
    # decoder can be teacher-forced): the stage checks its rewrites and times words on it (review.py).
    review: Callable[[Any], None] | None = None


@dataclass
class WindowResult:
    tokens: list[int]  # sampled tokens, timestamps included, eot excluded
    text: str
    avg_logprob: float
    no_speech_prob: float
    temperature: float
    compression_ratio: float
    repetitive: bool


def initial_tokens(tokenizer: Tokenizer, options: DecodeOptions, prompt_tokens: list[int],
                   n_text_ctx: int) -> list[int]:
    tokens = []
    if prompt_tokens:
        tokens = [tokenizer.sot_prev] + prompt_tokens[-(n_text_ctx // 2 - 1):]
    tokens += list(tokenizer.sot_sequence)
    if options.without_timestamps:
        tokens.append(tokenizer.no_timestamps)
    return tokens


class _DecoderState:
    """The running decoder: token array, cache and token lists of n hypotheses over one window's audio."""

    def __init__(self, decoder: StepDecoder, audio: Any, cache: Any, tokens: list[list[int]]) -> None:
        self.decoder = decoder
        self.audio = audio  # one row for every hypothesis: the decoder's cross-attention shares it
        self.cache = decoder.expand(cache, len(tokens))
        self.lists = tokens
        self.tokens = np.array(tokens, dtype=np.int64)

    def advance(self, next_tokens: list[int], sources: list[int] | None = None) -> np.ndarray:
        """Append one token per hypothesis (after reordering by `sources`) and return the next logits."""
        if sources is not None:
            index = np.array(sources, dtype=np.int64)
            self.cache = self.decoder.select(self.cache, index)
            self.tokens = self.tokens[index]
            self.lists = [list(self.lists[s]) for s in sources]
        new = np.array(next_tokens, dtype=np.int64)
        self.tokens = np.concatenate([self.tokens, new[:, None]], axis=1)
        for seq, token in zip(self.lists, next_tokens, strict=True):
            seq.append(token)
        logits, self.cache = self.decoder.advance(self.audio, self.cache, new)
        return logits


def _sample_loop(state: _DecoderState, logits: np.ndarray, filters: LogitFilters, temperature: float,
                 eot: int, max_len: int, generator: TorchCompatibleRandom) -> tuple[list[list[int]], list[float]]:
    """Greedy (temperature 0) or sampling for every hypothesis until eot, a loop, or max_len tokens.

    A hypothesis that ends leaves the batch, so the rest decode fewer rows: at temperature > 0 one
    babbling sample otherwise kept all best_of rows running to the token budget.
    """
    n = len(state.lists)
    sum_logprobs = [0.0] * n
    ended: dict[int, list[int]] = {}
    rows = list(range(n))  # the hypothesis each row of `state` holds
    for _ in range(max_len):
        filters.check()
        filters(state.tokens, logits, state.lists)
        logprobs = log_softmax(logits)
        chosen = logits.argmax(axis=-1) if temperature == 0 else draw(logits, temperature, generator)
        picks = chosen.tolist()
        live = []
        for k, row in enumerate(rows):
            sum_logprobs[row] += float(logprobs[k, picks[k]])
            sampled = state.lists[k][filters.sample_begin:] + [picks[k]]
            if picks[k] == eot or repeats_at_tail(sampled, text_below=eot):
                ended[row] = state.lists[k] + [picks[k]]
            else:
                live.append(k)
        if not live:
            break
        sources = live if len(live) < len(rows) else None
        rows = [rows[k] for k in live]
        logits = state.advance([picks[k] for k in live], sources)
    for k, row in enumerate(rows):
        ended.setdefault(row, state.lists[k])
    return [ended[row] for row in range(n)], sum_logprobs


def _beam_loop(state: _DecoderState, logits: np.ndarray, filters: LogitFilters, beam_size: int,
               eot: int, max_len: int) -> tuple[list[list[int]], list[float]]:
    """openai's BeamSearchDecoder (patience 1): keep beam_size live hypotheses, stop at beam_size finished."""
    sum_logprobs = [0.0] * beam_size
    finished: dict[tuple[int, ...], float] = {}
    for _ in range(max_len):
        filters.check()
        filters(state.tokens, logits, state.lists)
        top_lp, top_ids = top(log_softmax(logits), beam_size + 1)
        scores: dict[tuple[int, ...], float] = {}
        sources: dict[tuple[int, ...], int] = {}
        for k, (lps, ids) in enumerate(zip(top_lp.tolist(), top_ids.tolist(), strict=True)):
            for lp, token in zip(lps, ids, strict=True):
                seq = (*state.lists[k], token)
                scores[seq], sources[seq] = sum_logprobs[k] + lp, k
        live: list[tuple[int, ...]] = []
        for seq in sorted(scores, key=scores.get, reverse=True):
            if seq[-1] == eot:
                if len(finished) < beam_size:
                    finished[seq] = scores[seq]
            elif len(live) < beam_size:
                live.append(seq)
        if len(finished) >= beam_size or not live:
            break
        sum_logprobs = [scores[seq] for seq in live]
        logits = state.advance([seq[-1] for seq in live], [sources[seq] for seq in live])
    else:
        live = [tuple(seq) for seq in state.lists]
    for seq, score in sorted(zip(live, sum_logprobs, strict=False), key=lambda item: -item[1]):
        if len(finished) >= beam_size:
            break
        finished.setdefault((*seq, eot), score)
    return [list(seq) for seq in finished], list(finished.values())


def token_budget(max_timestamp_index: int) -> int:
    """Most tokens a window of this much audio can plausibly hold (timestamps included)."""
    seconds = max_timestamp_index * SECONDS_PER_TIMESTAMP
    return MIN_TOKENS_PER_WINDOW + int(MAX_TOKENS_PER_S * seconds)


def window_seed(seed: int, temperature: float) -> int:
    """One fixed seed per (options.seed, temperature): each fallback attempt draws its own, reproducible samples."""
    return seed * 1000 + round(temperature * 100)


def decode_window(decoder: StepDecoder, audio: Any, tokenizer: Tokenizer, options: DecodeOptions,
                  temperature: float, prompt_tokens: list[int], suppress: tuple[int, ...],
                  max_timestamp_index: int) -> WindowResult:
    """Decode one window whose audio (cross-attention keys/values, batch 1) the engine has prepared."""
    n_text_ctx = decoder.n_text_ctx
    start = initial_tokens(tokenizer, options, prompt_tokens, n_text_ctx)
    sample_begin = len(start)
    max_len = min(n_text_ctx // 2, n_text_ctx - sample_begin, token_budget(max_timestamp_index))
    filters = LogitFilters(tokenizer, options, suppress, sample_begin, max_timestamp_index)
    first, cache = decoder.begin(audio, start, [start.index(tokenizer.sot), len(start) - 1])
    no_speech_prob = float(softmax(first[0])[tokenizer.no_speech])
    n_hyp = max(1, options.beam_size) if temperature > 0 or options.beam_size > 1 else 1
    state = _DecoderState(decoder, audio, cache, [list(start) for _ in range(n_hyp)])
    logits = np.repeat(first[1:2], n_hyp, axis=0)
    if temperature == 0 and n_hyp > 1:
        sequences, sum_logprobs = _beam_loop(state, logits, filters, n_hyp, tokenizer.eot, max_len)
    else:
        generator = TorchCompatibleRandom(window_seed(options.seed, temperature))
        sequences, sum_logprobs = _sample_loop(state, logits, filters, temperature, tokenizer.eot, max_len,
                                               generator)
    return _best(sequences, sum_logprobs, sample_begin, tokenizer, no_speech_prob, temperature)


def _best(sequences: list[list[int]], sum_logprobs: list[float], sample_begin: int, tokenizer: Tokenizer,
          no_speech_prob: float, temperature: float) -> WindowResult:
    """Rank by sum logprob / length (openai's default ranker) and describe the winner."""
    candidates = []
    for seq, lp in zip(sequences, sum_logprobs, strict=True):
        sampled = seq[sample_begin:]
        if tokenizer.eot in sampled:
            sampled = sampled[: sampled.index(tokenizer.eot)]
        candidates.append((lp / max(1, len(sampled)), sampled, lp))
    _, tokens, sum_lp = max(candidates, key=lambda c: c[0])
    text = tokenizer.decode(tokens)
    return WindowResult(tokens=tokens, text=text, avg_logprob=sum_lp / (len(tokens) + 1),
                        no_speech_prob=no_speech_prob, temperature=temperature,
                        compression_ratio=compression_ratio(text),
                        repetitive=is_repetitive(tokens, text, tokenizer.eot))
