"""A rewrite of what the model heard is kept only when the audio supports it at least as well, within a margin.

Spelling and phonemes cannot tell "first one" from "FAST1" or "in line" from
"9-line": they sound alike by design. The decoder can, because it reads the
audio and the words around the span: teacher-forced on the same encoder
output, "The FAST1 on the left arm" scored 20 nats below "The first one on the
left arm", "burns to the chest seal both arms" 22 below "chest in both arms",
while "Tourniquet applied" scored 3.9 below the misheard "Turn it get applied"
(a term tiny.en spells badly, so a small margin is needed to keep real fixes).

Each proposal replaces one span of the segment's text; the segment is scored
with what was heard and with each replacement alone (one batched decoder pass),
and a proposal is accepted when its log-probability is at least the heard
text's minus its kind's margin. Proposals come from anywhere (the sound-alike
corrector, number groupings, the unbiased decoder's reading): the audio decides.
Without a decoder to ask (the ctranslate2 backend, a partial result) nothing
that needs the check is applied: it is listed as considered, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Scorer = Callable[[list[str]], list[float]]  # texts of one segment -> their total log-probabilities
NOT_CHECKED = "not checked against the audio (no teacher-forced decoder here): kept as heard"
WEAKER = "the audio supports what was heard better"


@dataclass(frozen=True)
class Proposal:
    """Replace text[start_char:end_char] by `replacement`; `kind` picks the margin; `trail` is its audit entry."""

    kind: str  # "vocabulary", "number" or "unbiased"
    start_char: int
    end_char: int
    replacement: str
    trail: dict[str, Any] = field(default_factory=dict)

    def applied_to(self, text: str) -> str:
        return text[: self.start_char] + self.replacement + text[self.end_char:]


@dataclass(frozen=True)
class Verdict:
    proposal: Proposal
    accepted: bool
    logprob_heard: float | None
    logprob_proposed: float | None
    reason: str = ""

    def considered(self, text: str) -> dict[str, Any]:
        """The audit entry of a rejected proposal: what was heard there, what was proposed, both scores, why."""
        p = self.proposal
        return {"kind": p.kind, "heard": text[p.start_char:p.end_char], "proposed": p.replacement,
                "start_char": p.start_char, "end_char": p.end_char, **_scores(self), "reason": self.reason,
                **{k: v for k, v in p.trail.items() if k not in ("heard", "start_char", "end_char")}}


def _scores(verdict: Verdict) -> dict[str, float | None]:
    def rounded(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    return {"audio_logprob_heard": rounded(verdict.logprob_heard),
            "audio_logprob_proposed": rounded(verdict.logprob_proposed)}


def check(text: str, proposals: list[Proposal], scorer: Scorer | None,
          margins: dict[str, float]) -> list[Verdict]:
    """Each proposal alone against `text`, in one scoring call; a proposal that changes no token of the text
    (a spelling applied on top, such as "120 over 80" -> "120/80") passes unscored (scores None)."""
    changing = [p for p in proposals if p.applied_to(text) != text]
    if scorer is None:
        verdicts = {id(p): Verdict(p, False, None, None, NOT_CHECKED) for p in changing}
        return [verdicts.get(id(p), Verdict(p, True, None, None)) for p in proposals]
    verdicts = {}
    if changing:
        totals = scorer([text, *[p.applied_to(text) for p in changing]])
        for p, total in zip(changing, totals[1:], strict=True):
            accepted = total >= totals[0] - margins[p.kind]
            verdicts[id(p)] = Verdict(p, accepted, totals[0], total, "" if accepted else WEAKER)
    return [verdicts.get(id(p), Verdict(p, True, None, None)) for p in proposals]


def apply(text: str, accepted: list[Proposal]) -> str:
    """`text` with non-overlapping accepted proposals applied (right to left, so spans stay valid)."""
    for p in sorted(accepted, key=lambda q: -q.start_char):
        text = p.applied_to(text)
    return text


def scored_trail(verdict: Verdict, heard_key: str, proposed_key: str) -> dict[str, Any]:
    """An accepted proposal's audit entry (its own keys kept) with both audio scores under the given names."""
    scores = _scores(verdict)
    return {**verdict.proposal.trail, heard_key: scores["audio_logprob_heard"],
            proposed_key: scores["audio_logprob_proposed"]}
