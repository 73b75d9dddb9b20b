"""Fake host trees and traces shipped in tests/data/telemetry, copied so a test may rewrite them (fixtures for every
test directory, through tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
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


FAKE_NVPMODEL = """#!/bin/sh
# stands in for /usr/sbin/nvpmodel: records its arguments, then does what `nvpmodel -m N` does to the status file
echo "$@" >> "{root}/nvpmodel-calls"
[ "$1" = "-m" ] || exit 2
printf 'pmode:%04d fmode:quiet\\n' "$2" > "{root}/var/lib/nvpmodel/status"
"""


@pytest.fixture
def jetson(host_tree) -> tuple[Path, str]:
    """A fake Orin Nano (on a UPS) with a fake nvpmodel binary inside it; returns (root, binary)."""
    root = host_tree("with-ups")
    binary = root / "nvpmodel"
    binary.write_text(FAKE_NVPMODEL.format(root=root))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return root, str(binary)


def calls(root: Path) -> list[str]:
    """The arguments the fake nvpmodel was run with, one call a line."""
    path = root / "nvpmodel-calls"
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def helper_socket(jetson: tuple[Path, str], tmp_path: Path) -> Iterator[str]:
    """The real tcccd-nvpmodel helper process, bound to a socket in tmp_path, over the fake root and binary."""
    root, binary = jetson
    sock_path = tmp_path / "nvpmodel.sock"
    proc = subprocess.Popen([sys.executable, "-m", "tcccd.system.nvpmodel_helper", "--socket", str(sock_path),
                             "--root", str(root), "--nvpmodel", binary],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "LISTEN_FDS": ""})
    deadline = time.monotonic() + 20
    try:
        while not sock_path.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "helper never bound its socket"
            time.sleep(0.05)
        yield str(sock_path)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
