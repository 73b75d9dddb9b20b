"""Real human voices (tests/data/real-speech, 51 clips): no loops, nothing dropped, WER bounded.

Synthetic speech alone hid a decoding loop that real recordings trigger at once ("twenty" came back as
twenty-one "20."s with the truncated audio context). This set was never used to tune anything: the bound
below is the acceptance bar of the issue that found the loops (faster-whisper tiny.en int8 beam 5 scored
6.9% on a comparable set), not a figure fitted to it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcccd.kit.testing import PluginHarness
from tcccd.plugins.whisper.engine.repetition import looped
from tcccd.plugins.whisper.review.textnorm import corpus_wer
from tcccd.wire.protocol import AudioFormat, Message

REAL_SPEECH = Path(__file__).resolve().parents[3] / "data" / "real-speech"
MAX_WER = 0.069
pytestmark = pytest.mark.slow


def references() -> list[tuple[str, str]]:
    lines = (REAL_SPEECH / "refs.tsv").read_text().splitlines()
    return [tuple(line.split("\t", 1)) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def replies(tmp_path_factory):
    """Every clip through the whisper stage on its defaults (beam 5, full window), as the daemon runs it."""
    out = {}
    with PluginHarness("whisper", {}, tmp_path_factory.mktemp("real")) as harness:
        for clip_id, _ in references():
            payload = (REAL_SPEECH / f"{clip_id}.wav").read_bytes()
            [reply] = harness.request(Message("transcribe", payload=payload, final=True, audio=AudioFormat("wav")))
            out[clip_id] = reply
        out["health"] = harness.plugin.health()
    return out


def test_every_clip_gets_a_transcript_and_none_loops(replies):
    texts = {clip_id: replies[clip_id].data["text"] for clip_id, _ in references()}
    assert all(replies[c].type == "transcript" for c in texts)
    assert [c for c, t in texts.items() if not t.strip()] == []
    assert [(c, t) for c, t in texts.items() if looped(t)] == []
    assert [c for c in texts if replies[c].data.get("dropped")] == []
    assert replies["health"]["dropped_loops"] == 0


def test_word_error_rate_is_within_the_bar(replies):
    pairs = [(reference.replace("-", " "), replies[clip_id].data["text"]) for clip_id, reference in references()]
    assert corpus_wer(pairs) <= MAX_WER, [p for p in pairs if p[0].lower() not in p[1].lower()]
