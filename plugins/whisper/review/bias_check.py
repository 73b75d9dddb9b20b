"""Where the lexicon bias steered beam search into a term, the unbiased decoder's reading is put to the audio too.

biasing.py adds a bounded bonus to lexicon-term tokens the audio already
supports, which rescues "tourniquet" from "turn the kit" but can also push a
term where the speaker said something else. Its choices leave no trail in the
beam, so they are found afterwards: a term in what was heard whose tokens,
teacher-forced without any bias, are not the decoder's own first choice at
some position is a place where the bias decided. There the unbiased decoder
continues greedily from its own first choice to the end of the term's words,
and that reading becomes an `unbiased` proposal for the term's span
(audio_check.py): the term stays only if the audio supports it at least as
well as the unbiased reading, within ReviewSettings.bias_margin_logprob.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tcccd.plugins.whisper.review.audio_check import Proposal

MAX_TERM_TOKENS = 12  # the unbiased reading of a term is cut here


class BiasCheck:
    def __init__(self, terms: Iterable[str], tokenizer: Any) -> None:
        ordered = sorted({t.strip() for t in terms if t.strip()}, key=len, reverse=True)
        self.pattern = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(t) for t in ordered) + r")(?![\w-])",
                                  re.IGNORECASE)
        self.tokenizer = tokenizer

    def proposals(self, scorer: Any, heard: str) -> list[Proposal]:
        """One proposal per term the bias decided: the term's words as the unbiased decoder writes them."""
        spans = [m.span() for m in self.pattern.finditer(heard)]
        if not spans:
            return []
        [forced] = scorer.forced([heard])
        ends = _token_ends(self.tokenizer, scorer.tokens(heard))  # char where each token ends, in heard
        out = []
        for start_char, end_char in spans:
            tokens = [i for i, end in enumerate(ends) if end > start_char and (i == 0 or ends[i - 1] < end_char)]
            steered = [i for i in tokens if forced.alternative_logprobs[i] > forced.logprobs[i]]
            if steered:
                proposal = self._unbiased(scorer, heard, forced, (start_char, end_char), tokens[0], steered[0])
                if _words(proposal.replacement) != _words(heard[start_char:end_char]):  # not a mere case change
                    out.append(proposal)
        return out

    def _unbiased(self, scorer: Any, heard: str, forced: Any, span: tuple[int, int], term_first: int,
                  at: int) -> Proposal:
        """The term's words rewritten from token `at` on by the greedy unbiased decoder, the rest kept as heard."""
        tok, eot = self.tokenizer, self.tokenizer.eot
        kept = forced.tokens[term_first:at]
        n_words = len(heard[span[0]:span[1]].split())

        def done(token: int, written: list[int]) -> bool:
            starts_word = tok.decode([token])[:1].isspace() if token < eot else True
            return token >= eot or (starts_word and len(tok.decode(kept + written).split()) >= n_words)

        written = scorer.window.audio.continue_greedy([*scorer.prefix, *forced.tokens[:at]],
                                                      int(forced.alternatives[at]), done, MAX_TERM_TOKENS)
        reading = tok.decode(kept + written).strip()
        return Proposal("unbiased", span[0], span[1], reading,
                        {"heard": heard[span[0]:span[1]], "term": reading, "start_char": span[0], "end_char": span[1],
                         "similarity": None, "source": "unbiased decoder"})


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _token_ends(tokenizer: Any, tokens: list[int]) -> list[int]:
    """The character where each token's text ends, in the text they spell without its leading space."""
    return [len(tokenizer.decode(tokens[: i + 1])) - 1 for i in range(len(tokens))]
