"""Negation and correction, as a medic says them.

A finding is negated when a cue comes before it in its own clause ("no
tourniquet needed", "denies pain", "no pulse in the left wrist") or right after it
("tourniquet not needed"). A negated finding is never a positive field: the card
keeps it as a note in the medic's words. "no known allergies" is an answer, not a
negation: its rule reads it whole, so the cue lies inside the finding, not before.

A correction ("correction, pulse 110", "correction: ketamine 50 mg IM") marks
what follows it in the sentence, or in the next sentence when nothing follows:
the card replaces the casualty's last event of the same kind with it.
"""

from __future__ import annotations

import re

from tcccd.plugins.card.sentences import Sentence

_CUE_BEFORE = re.compile(r"\b(?:no|not|denies|denied|without|negative\s+for|absent|none|never|nor)\b")
_CUE_AFTER = re.compile(r"\s*(?:is\s+|was\s+)?(?:not\s+(?:needed|required|indicated|applied|given|done|present|"
                        r"palpable|felt)|negative|absent|none)\b")
_CORRECTION = re.compile(r"\b(?:correction|correct\s+that|scratch\s+that|let\s+me\s+correct\s+that)\b[\s,:.]*")


def negated(s: Sentence, start: int, end: int) -> bool:
    clause_start, clause_end = s.clause_of(start)
    return bool(_CUE_BEFORE.search(s.lower, clause_start, start) or _CUE_AFTER.match(s.lower, end, clause_end))


def correction_from(s: Sentence) -> int | None:
    """Where a correction cue ends in this sentence (what follows it is the corrected value), or None."""
    match = _CORRECTION.search(s.lower, s.start, s.end)
    return match.end() if match else None
