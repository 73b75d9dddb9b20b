"""Writes the shipped replay traces (deterministic: a fixed seed). Run from this directory to regenerate.

discharge.csv      battery 100% -> 5%, 1% a minute, a sample every 5 s
thermal_spike.csv  the hottest zone 55 C -> 88 C -> 58 C, a sample a second
oscillating.csv    battery around 40% with +-2% noise for 10 min, then charging to 50%
sensor_lost.csv    a hot zone at 78 C whose sensor disappears for 2 min, then returns cool
"""

from __future__ import annotations

import csv
import random


def write(name: str, rows: list[tuple[float, float | None, float | None]]) -> None:
    with open(name, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["t_s", "battery_percent", "hottest_c"])
        for t_s, battery, hottest in rows:
            out.writerow([f"{t_s:g}", "" if battery is None else f"{battery:.1f}",
                          "" if hottest is None else f"{hottest:.1f}"])


def main() -> None:
    rng = random.Random(12)
    write("discharge.csv", [(t, 100 - t / 60, 52.0 + rng.uniform(-1, 1)) for t in range(0, 95 * 60 + 1, 5)])
    spike = [55 + 33 * min(t, 120) / 120 if t < 180 else max(58.0, 88 - (t - 180) * 0.25) for t in range(420)]
    write("thermal_spike.csv", [(t, None, round(c + rng.uniform(-0.5, 0.5), 1)) for t, c in enumerate(spike)])
    oscillating = [40 + rng.uniform(-2, 2) for _ in range(600)] + [min(50.0, 40 + (t * 0.1)) for t in range(300)]
    write("oscillating.csv", [(t, b, 50.0) for t, b in enumerate(oscillating)])
    lost = [78.0] * 60 + [None] * 120 + [60.0] * 120
    write("sensor_lost.csv", [(t, 80.0 if t < 30 or t >= 150 else None, c) for t, c in enumerate(lost)])


if __name__ == "__main__":
    main()
