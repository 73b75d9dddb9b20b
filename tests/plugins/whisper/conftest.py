"""Shared, module-loading fixtures for the whisper plugin's tests (load once per session)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def corpus():
    """bench/asr_corpus.py: espeak-ng speech and noise, the same generator the benchmark uses."""
    spec = importlib.util.spec_from_file_location("asr_corpus", ROOT / "bench" / "asr_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["asr_corpus"] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def detector():
    from tcccd.plugins.whisper.vad import SpeechDetector, VadSettings

    return SpeechDetector.load(VadSettings())


@pytest.fixture(scope="session")
def transcriber(tmp_path_factory):
    """The embedded tiny.en on the torch backend (no ONNX export), loaded once for every whisper test."""
    from tcccd.plugins.whisper.transcriber import Transcriber

    return Transcriber.load(None, backend="torch", cache_dir=tmp_path_factory.mktemp("whisper-cache"), threads=2)
