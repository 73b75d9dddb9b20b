"""Fake host trees and traces shipped in tests/data/telemetry, copied so a test may rewrite them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "telemetry"


@pytest.fixture
def host_tree(tmp_path: Path):
    """host_tree('with-ups') -> a private copy of that fake host root."""
    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(DATA / name, target)
        return target
    return copy
