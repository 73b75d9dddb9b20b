"""A local time zone in which the host's wall clock reads a chosen time now: the kit's clock, set by `TZ`.

The card reads every clock time the medic says against the kit's local clock, so
a test that says one fixes the clock it is said at; the daemons a test starts
inherit `TZ`.
"""

from __future__ import annotations

import time


def zone_reading(local_min: int) -> str:
    """A POSIX `TZ` value under which the clock reads `local_min` minutes after midnight now."""
    utc_min = int(time.time() // 60) % (24 * 60)
    east_min = (local_min - utc_min + 12 * 60) % (24 * 60) - 12 * 60  # -12:00 .. +11:59
    sign = "-" if east_min >= 0 else "+"  # POSIX TZ counts west of Greenwich as positive
    return f"KIT{sign}{abs(east_min) // 60:02d}:{abs(east_min) % 60:02d}"
