"""Fixtures every test directory may use: a daemon subprocess with a test config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import DaemonProcess, make_config

pytest_plugins = ["tests.support.hosts"]


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
