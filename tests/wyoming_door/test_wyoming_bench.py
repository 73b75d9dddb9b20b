"""bench/wyoming.py runs as the issue runs it, `python bench/wyoming.py`, although its name is the package's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.daemon import REPO

pytest.importorskip("wyoming_bench")  # the 'bench' extra


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "bench/wyoming.py", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def test_the_script_imports_the_wyoming_package_not_itself():
    run = run_script("--help")  # imports wyoming.asr, wyoming.client... before argparse answers
    assert run.returncode == 0, run.stderr
    assert "--parts" in run.stdout


def test_an_unknown_part_is_refused_with_the_choices():
    run = run_script("--parts", "stt,latency")
    assert run.returncode != 0 and "choose from stt, tts, clips, tts-turns, stt-stream" in run.stderr, run.stderr
