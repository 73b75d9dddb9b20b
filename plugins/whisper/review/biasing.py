"""Vocabulary biasing inside the decoder: a bounded nudge toward lexicon terms the audio already supports.

The post-hoc correction (vocabulary.py) can only fix a term whose sounds the
model wrote as some other phrase; once beam search has pruned "tourniquet" for
"turn the kit" the term is gone. This LogitsProcessor keeps such a term alive:
it follows the hypothesis through a prefix trie of every term's token sequences
and adds `bonus_logit` to the next token of a term, at a word start (the term's
first token) or inside a term already begun (its continuation).

Three limits keep it from inventing words. The bonus is bounded (a fixed number
of logits, never a forced token). It goes only to a token the acoustic model
already supports: its log-probability must be within `margin_logprob` of the
best token's. And a term's first token earns it only if it is a real piece of
the word (`min_start_chars`), not a letter such as " I" or " R" that any noise
can start. On the corpus' silence and noise clips the text did not change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tcccd.plugins.whisper.engine.tokenizer import Tokenizer


_Bonus = tuple[int, np.ndarray, np.ndarray]  # (hypothesis row, token ids, bonus of each)


@dataclass(frozen=True)
class BiasSettings:
    """Chosen on tests/data/asr/tune.txt only (synthetic speech, torch backend; bench/asr_biasing.py).

    Greedy raw WER 44.2% unbiased; continuation bonus alone 43.1%; start bonus 0.5/1/2/3/4 (bonus 2, margin 3)
    41.0/40.4/37.8/37.8/40.4%; margin 2 instead of 3 38.8%, 1 worse on noise; an absolute floor of -3 on the
    token's logprob 39.9%. Beam 5 with these defaults: 36.7% -> 28.2% raw, 27.7% -> 21.8% after the correction.
    """

    bonus_logit: float = 2.0  # added to a supported continuation of a term already begun
    start_bonus_logit: float = 2.0  # added to a supported first token of a term at a word start
    margin_logprob: float = 3.0  # a token this far below the best one (natural log) gets no bonus
    # A term's first token earns the start bonus only if it holds this many characters: " I", " on", " R" (from
    # "I-gel", "ondansetron", "RPG") are no evidence of a term, and over breathing noise boosting them made
    # tiny.en write "RRRR..." where it had written "Ahh!".
    min_start_chars: int = 3


class TermTrie:
    """Every term's token sequences as prefix -> next tokens, for terms that start a word.

    Each term is kept as the tokenizer writes it after a space (" tourniquet"),
    and, for the first word of a segment, without one ("Tourniquet"); each both
    as written and with its first letter upper case, as Whisper writes it at a
    sentence start.
    """

    def __init__(self, terms: Iterable[str], tokenizer: Tokenizer, min_start_chars: int = 3) -> None:
        self.eot = tokenizer.eot
        self.after_space: dict[tuple[int, ...], set[int]] = {}
        self.at_segment_start: dict[tuple[int, ...], set[int]] = {}
        self.longest = 0
        for term in terms:
            for variant in _spellings(term):
                self._add(self.after_space, tokenizer.encode(" " + variant))
                self._add(self.at_segment_start, tokenizer.encode(variant))
        if not self.after_space:
            raise ValueError("biasing needs at least one lexicon term; the term list was empty")
        self.first_after_space = _distinctive(self.after_space[()], tokenizer, min_start_chars)
        self.first_at_segment_start = self.first_after_space | _distinctive(self.at_segment_start[()], tokenizer,
                                                                             min_start_chars)

    def _add(self, trie: dict[tuple[int, ...], set[int]], ids: list[int]) -> None:
        self.longest = max(self.longest, len(ids))
        for end in range(len(ids)):
            trie.setdefault(tuple(ids[:end]), set()).add(ids[end])

    def next_tokens(self, history: list[int]) -> tuple[set[int], frozenset[int]]:
        """(continuations of a term begun at the end of `history`, first tokens of a term that may start now).

        `history` is the hypothesis' token list; special and timestamp tokens
        (ids >= eot) mark a segment start.
        """
        continuing: set[int] = set()
        for length in range(1, min(self.longest, len(history)) + 1):
            suffix = tuple(history[-length:])
            if any(t >= self.eot for t in suffix):
                break
            continuing |= self.after_space.get(suffix, set())
            if len(history) == length or history[-length - 1] >= self.eot:
                continuing |= self.at_segment_start.get(suffix, set())
        if not history or history[-1] >= self.eot:
            return continuing, self.first_at_segment_start
        return continuing, self.first_after_space


def _spellings(term: str) -> set[str]:
    return {term, term[:1].upper() + term[1:]}


def _distinctive(first_tokens: set[int], tokenizer: Tokenizer, min_chars: int) -> frozenset[int]:
    return frozenset(t for t in first_tokens if len(tokenizer.decode([t]).strip()) >= min_chars)


class LexiconBias:
    """A decoding.LogitsProcessor (numpy): put it in DecodeOptions.logits_processors (any backend but ctranslate2)."""

    def __init__(self, trie: TermTrie, settings: BiasSettings | None = None) -> None:
        self.trie = trie
        self.settings = settings or BiasSettings()
        self._start_index: dict[frozenset[int], np.ndarray] = {}
        s = self.settings
        if min(s.margin_logprob, s.bonus_logit, s.start_bonus_logit, s.min_start_chars) < 0:
            raise ValueError(f"bias settings {s}: bonuses, margin and min_start_chars must be >= 0")

    @classmethod
    def from_terms(cls, terms: Iterable[str], tokenizer: Tokenizer,
                   settings: BiasSettings | None = None) -> LexiconBias:
        settings = settings or BiasSettings()
        return cls(TermTrie(terms, tokenizer, settings.min_start_chars), settings)

    def __call__(self, tokens: np.ndarray, logits: np.ndarray) -> None:
        """Edit `logits` [n_hyp, vocab] in place; `tokens` [n_hyp, seq] is every hypothesis so far."""
        parts = [part for k, history in enumerate(tokens.tolist()) for part in self._bonuses(k, history, logits)]
        if not parts:
            return
        row = np.concatenate([np.full(len(ids), k, dtype=np.int64) for k, ids, _ in parts])
        column = np.concatenate([ids for _, ids, _ in parts])
        bonus = np.concatenate([values for _, _, values in parts])
        # logprob(t) >= best logprob - margin  <=>  logit(t) >= best logit - margin: no softmax over the vocabulary
        floor = logits.max(axis=-1) - self.settings.margin_logprob
        supported = logits[row, column] >= floor[row]
        np.add.at(logits, (row[supported], column[supported]), bonus[supported])

    def _bonuses(self, k: int, history: list[int], logits: np.ndarray) -> list[_Bonus]:
        """(row, token ids, bonus each) for hypothesis k; a token that both starts and continues a term gets
        the continuation bonus (the two parts add up to it)."""
        continuing, starting = self.trie.next_tokens(history)
        start_bonus, bonus = self.settings.start_bonus_logit, self.settings.bonus_logit
        parts = []
        if start_bonus:
            start_ids = self._index(starting)
            parts.append((k, start_ids, np.full(start_ids.shape, start_bonus, dtype=logits.dtype)))
        if continuing and bonus:
            ids = sorted(continuing)
            extra = [bonus - (start_bonus if t in starting else 0.0) for t in ids]
            parts.append((k, np.array(ids, dtype=np.int64), np.array(extra, dtype=logits.dtype)))
        return parts

    def _index(self, ids: frozenset[int]) -> np.ndarray:
        """The first tokens as an array, built once per set (two sets: after a space, segment start)."""
        if ids not in self._start_index:
            self._start_index[ids] = np.array(sorted(ids), dtype=np.int64)
        return self._start_index[ids]
