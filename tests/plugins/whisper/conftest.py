"""Shared, module-loading fixtures for the whisper plugin's tests (load once per session)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
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
    from tcccd.plugins.whisper.stage.vad import SpeechDetector, VadSettings

    return SpeechDetector.load(VadSettings())


@pytest.fixture(scope="session")
def transcriber(tmp_path_factory):
    """The embedded tiny.en on the torch backend (no ONNX export), loaded once for every whisper test."""
    from tcccd.plugins.whisper.engine.transcriber import Transcriber

    return Transcriber.load(None, backend="torch", cache_dir=tmp_path_factory.mktemp("whisper-cache"), threads=2)


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory):
    """The cache the default backend exports its encoder and decoder graphs into, shared by the tests that read it."""
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="session")
def onnx_transcriber(onnx_cache):
    """The default backend (onnxruntime: encoder and decoder graphs), loaded once for every test that needs it."""
    from tcccd.plugins.whisper.engine.transcriber import Transcriber

    return Transcriber.load(None, backend="onnxruntime", cache_dir=onnx_cache, threads=2)


def espeak_16k(text: str, out_dir: Path, words_per_minute: int = 150) -> np.ndarray:
    """Speech made by espeak-ng at test time, as float32 mono 16 kHz (what the engine takes)."""
    import subprocess

    import soundfile
    import soxr

    wav = out_dir / f"speech-{abs(hash(text))}.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", str(words_per_minute), "-w", str(wav), text], check=True)
    audio, rate_hz = soundfile.read(wav, dtype="float32")
    return soxr.resample(audio, rate_hz, 16000).astype(np.float32)


SENTENCE = "The patient is breathing and the bleeding has stopped."


@pytest.fixture(scope="session")
def sentence_audio(tmp_path_factory):
    """SENTENCE spoken by espeak-ng, float32 16 kHz."""
    return espeak_16k(SENTENCE, tmp_path_factory.mktemp("speech"))


def word_recall(expected: str, heard: str) -> float:
    """Share of the expected words found in the transcript (case and punctuation ignored)."""
    import re

    def words(text: str) -> list[str]:
        return re.findall(r"[a-z']+", text.lower())

    heard_words = set(words(heard))
    wanted = words(expected)
    return sum(w in heard_words for w in wanted) / len(wanted)


def rebuild_text(heard: str, corrections: list[dict], numbers: list[dict]) -> str:
    """Apply a segment's audit trail to what the model heard: the corrections (spans in `heard`), then the number
    rewrites (spans in the corrected text), checking that each span holds what the trail says was there. A user
    auditing a record does exactly this."""
    text = heard
    for fix in sorted(corrections, key=lambda c: -c["start_char"]):
        assert text[fix["start_char"]:fix["end_char"]] == fix["heard"]
        text = text[:fix["start_char"]] + fix["term"] + text[fix["end_char"]:]
    for rewrite in sorted(numbers, key=lambda r: -r["start_char"]):
        assert text[rewrite["start_char"]:rewrite["end_char"]] == rewrite["heard"]
        text = text[:rewrite["start_char"]] + rewrite["written"] + text[rewrite["end_char"]:]
    return text
