"""Numbers that sound like another number ("fifteen" and "fifty"): doubted unless the audio tells them apart.

tiny.en hears "zero nine fifteen" as 0950 often enough to matter: through the
virtual microphone a read-back test wrote a TXA time of 0950 on the card, and
the word's probability was above the uncertainty threshold, so the card showed
it as confirmed. A number's probability does not measure this confusion; the
decoder can, by scoring the segment with the number's twin in its place (one
batched, teacher-forced pass, the same check as every rewrite: audio_check.py).
A number whose twin scores within the margin of what was heard is listed in
`uncertain`, with its twin and both scores (word_spans.py), so the card leaves
it for the medic to confirm. Nothing is rewritten: the record keeps what was heard.

Twins: the last two digits of a number written in digits, 13..19 <-> 30..90
(0915 <-> 0950, 115 <-> 150, 17 <-> 70), and the same pairs written as words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tcccd.plugins.whisper.review.audio_check import Proposal, Scorer, check

_TEENS = {"thirteen": "thirty", "fourteen": "forty", "fifteen": "fifty", "sixteen": "sixty",
          "seventeen": "seventy", "eighteen": "eighty", "nineteen": "ninety"}
_WORD_TWIN = {**_TEENS, **{ty: teen for teen, ty in _TEENS.items()}}
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w])|\b([A-Za-z]+)\b")


@dataclass(frozen=True)
class Doubt:
    """Characters [start_char, end_char) of the reading, whose twin the audio does not rule out."""

    start_char: int
    end_char: int
    heard: str
    twin: str
    logprob_heard: float
    logprob_twin: float


def twin_of(number: str) -> str | None:
    """The number that sounds like `number` (digits or a number word), or None when it has none."""
    if number.isdigit():
        if len(number) < 2:
            return None
        tens, units = number[-2], number[-1]
        if tens == "1" and units in "3456789":
            return number[:-2] + units + "0"
        if units == "0" and tens in "3456789":
            return number[:-2] + "1" + tens
        return None
    twin = _WORD_TWIN.get(number.lower())
    if twin is None:
        return None
    return twin.capitalize() if number[0].isupper() else twin


def doubts(reading: str, scorer: Scorer | None, margin_logprob: float) -> list[Doubt]:
    """The numbers of `reading` whose twin scores at least the reading's log-probability minus the margin."""
    proposals = []
    for match in _NUMBER.finditer(reading):
        twin = twin_of(match.group())
        if twin is not None:
            proposals.append(Proposal("twin", match.start(), match.end(), twin))
    if scorer is None or not proposals:
        return []
    verdicts = check(reading, proposals, scorer, {"twin": margin_logprob})
    return [Doubt(v.proposal.start_char, v.proposal.end_char, reading[v.proposal.start_char:v.proposal.end_char],
                  v.proposal.replacement, v.logprob_heard, v.logprob_proposed) for v in verdicts if v.accepted]
