"""Drive the cap policy from a recorded trace, to see what it would have decided and when.

A trace is CSV with a header: `t_s` (seconds from the start), then any of `battery_percent` and
`hottest_c`; an empty cell is a reading that was missing at that moment. Other columns are ignored,
so a trace logged by `tcccd telemetry --watch --json` and flattened still replays.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tcccd.telemetry.policy import CapPolicy, Decision
from tcccd.telemetry.settings import TelemetrySettings

READINGS = ("battery_percent", "hottest_c")


class TraceError(ValueError):
    """A trace that cannot be replayed; the message names the file, the line and what is accepted."""


@dataclass
class Sample:
    t_s: float
    values: dict[str, float | None]


def read_trace(path: Path) -> list[Sample]:
    try:
        with path.open(newline="") as handle:
            return list(_samples(path, csv.DictReader(handle)))
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not a text CSV file") from None


def _samples(path: Path, rows: csv.DictReader) -> Iterator[Sample]:
    fields = rows.fieldnames or []
    if "t_s" not in fields or not any(name in fields for name in READINGS):
        raise TraceError(f"{path}: the header must have t_s and at least one of {', '.join(READINGS)}; "
                         f"it has {', '.join(fields) or 'nothing'}")
    last_t_s = float("-inf")
    for line, row in enumerate(rows, start=2):
        try:
            t_s = float(row["t_s"])
            values = {name: float(row[name]) if row.get(name) not in (None, "") else None for name in READINGS}
        except ValueError as exc:
            raise TraceError(f"{path}:{line}: {exc}; cells must be numbers (empty = missing)") from None
        if t_s < last_t_s:
            raise TraceError(f"{path}:{line}: t_s goes backwards ({t_s:g} after {last_t_s:g})")
        last_t_s = t_s
        yield Sample(t_s, values)


def replay(samples: list[Sample], settings: TelemetrySettings, requested: str) -> list[Decision]:
    """Every decision the policy makes over the trace, at the trace's own times."""
    policy = CapPolicy(settings, requested)
    decisions = []
    for sample in samples:
        decision = policy.update(sample.values, sample.t_s)
        if decision is not None:
            decisions.append(decision)
    return decisions


def format_decision(decision: Decision) -> str:
    return f"t={decision.at:8.1f} s  {decision.effective:<10} {decision.reason}"
