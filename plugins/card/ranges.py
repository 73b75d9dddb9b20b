"""Values no casualty's body or monitor gives in practice: kept on the card, but shown unconfirmed for review.

A misheard number ("pulse 700" for "pulse 70") must not pass as a reading; it
must not vanish either. The bounds are wide on purpose: an extreme but real
reading (pulse 30, SpO2 60%) is recorded as said; only what is implausible for
a living casualty, or outside the scale (pain 11 of 10), is flagged.
"""

from __future__ import annotations

from typing import Any

BOUNDS: dict[tuple[str, str], tuple[float, float]] = {
    ("pulse", "rate"): (20, 250), ("bp", "systolic"): (40, 250), ("bp", "diastolic"): (20, 150),
    ("rr", "rate"): (4, 60), ("spo2", "percent"): (50, 100), ("pain", "score"): (0, 10),
    ("burn_extent", "percent"): (1, 100), ("fluid", "volume"): (1, 5000),
}


def out_of_range(what: Any) -> bool:
    for (kind, field), (low, high) in BOUNDS.items():
        value = getattr(what, field, None) if what.kind == kind else None
        if value is not None and not low <= value <= high:
            return True
    if what.kind == "bp" and what.systolic is not None and what.diastolic is not None:
        return what.diastolic >= what.systolic
    return False
