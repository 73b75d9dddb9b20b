"""How sure the model is of each word, from more than its tokens' probability.

A word's mean token probability (openai's and faster-whisper's word
probability) flagged 3 of 8 wrong words on real voices and 19 of 71 on the
synthetic medical set at 0.3, while flagging 10% of the right medical words.
The alignment pass that times the words (forced.WindowAudio.align) also gives,
at each token, the entropy of the whole distribution and the log-probability
of the best token the model did not read there: a wrong word is often one
where the model spread its belief, or nearly chose another token.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class WordEvidence:
    """What the alignment pass says of one word's tokens."""

    mean_logprob: float  # mean log-probability of its tokens
    min_logprob: float  # of its least likely token
    mean_entropy: float  # mean entropy (nats) of the distribution at its tokens
    min_margin: float  # least (token log-probability - best other token's): < 0 where another was likelier

    @classmethod
    def of(cls, forced: Any, word: Any) -> WordEvidence:
        span = slice(word.first_token, word.end_token)
        logprobs = forced.logprobs[span]
        entropies = forced.entropies[span] if forced.entropies is not None else np.zeros(len(logprobs))
        margins = logprobs - forced.alternative_logprobs[span]
        return cls(float(logprobs.mean()), float(logprobs.min()), float(entropies.mean()), float(margins.min()))
