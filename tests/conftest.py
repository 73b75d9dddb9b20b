"""Fixtures every test directory may use: a daemon subprocess with a test config; the hypothesis profile.

Hypothesis runs the `ci` profile unless HYPOTHESIS_PROFILE names another: examples derived from each test's
own source (derandomize) and no example database, so a run's result does not depend on the draw or on what an
earlier run on the same machine found. `HYPOTHESIS_PROFILE=explore` draws new examples every run (a nightly or
a local hunt; it keeps what it finds in .hypothesis/ and replays it).

The kit's clock reads 10:00 local when each test starts (`TZ`, which the daemons a test starts inherit): the card
reads a clock time said against it ("tourniquet at 0912" is past at 10:00, a plan at 21:30), so a test that says
one must not depend on the hour CI runs at.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.support.daemon import DaemonProcess, make_config
from tests.support.kit_clock import zone_reading

pytest_plugins = ["tests.support.hosts"]

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


KIT_CLOCK_MIN = 10 * 60  # 10:00 local


@pytest.fixture(autouse=True)
def kit_clock_at_ten(monkeypatch: pytest.MonkeyPatch):
    """Set the local zone so that the wall clock reads 10:00 now (the host's clock, outside tcccd)."""
    monkeypatch.setenv("TZ", zone_reading(KIT_CLOCK_MIN))
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def start_daemon(tmp_path: Path):
    started: list[DaemonProcess] = []

    def start(pipeline: list[dict[str, Any]], routes: dict[str, list[str]], env: dict[str, str] | None = None,
              top: dict[str, Any] | None = None, **daemon: Any) -> DaemonProcess:
        proc = DaemonProcess(tmp_path, make_config(tmp_path, pipeline, routes, top, **daemon), env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()
