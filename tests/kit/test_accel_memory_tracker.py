"""MemoryTracker reports what a step really peaked at, also when the step freed it before exit."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from tcccd.kit.memory_tracker import MemoryTracker, current_rss_bytes

MIB = 1024 * 1024


def spike(mib: int, hold_s: float = 0.0) -> None:
    """Touch `mib` MiB (so it is resident), keep it `hold_s`, then free it."""
    block = np.ones(mib * MIB, dtype=np.uint8)
    time.sleep(hold_s)
    assert block[-1] == 1


def test_peak_of_a_freed_allocation_is_seen():
    with MemoryTracker("spike") as m:
        spike(200)
    assert m.peak_delta_bytes >= 180 * MIB
    assert m.end_rss_bytes < m.peak_rss_bytes - 150 * MIB
    assert m.as_dict()["peak_delta_mb"] >= 180


def test_a_quiet_step_reports_no_spike():
    spike(200)  # an old, higher process peak must not be charged to the next step
    with MemoryTracker("quiet") as m:
        sum(range(10_000))
    assert m.peak_delta_bytes < 20 * MIB
    assert m.start_rss_bytes <= m.peak_rss_bytes


def test_nested_trackers_both_see_the_inner_spike():
    """A spike above every earlier peak of this process (in the full suite that peak is over 1 GB): the kernel's
    high-water mark has it, so the inner and the outer tracker both report it exactly."""
    above_old_peak_mib = (_status_kib("VmHWM") - _status_kib("VmRSS")) // 1024 + 300
    with MemoryTracker("outer") as outer, MemoryTracker("inner") as inner:
        spike(above_old_peak_mib)
    assert inner.peak_delta_bytes >= 280 * MIB
    assert outer.peak_rss_bytes >= inner.peak_rss_bytes


def _status_kib(field: str) -> int:
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith(field + ":"))
    return int(line.split()[1])


def test_a_held_allocation_under_an_older_peak_is_sampled():
    spike(300)
    with MemoryTracker("under the old peak") as m:
        spike(100, hold_s=0.1)
    assert m.peak_delta_bytes >= 90 * MIB


def test_no_cuda_figure_without_a_cuda_context():
    with MemoryTracker("cpu") as m:
        pass
    assert m.cuda_peak_bytes is None
    assert abs(m.end_rss_bytes - current_rss_bytes()) < 50 * MIB
