"""A Piper voice cut at its decoder: the same audio as the whole voice, the first sentence in pieces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tcccd.kit.testing import PluginHarness
from tcccd.plugins.piper.pieces import FIRST_FRAMES, PiecewiseVoice, piece_bounds, split_graph
from tcccd.plugins.piper.plugin import default_voice_path
from tcccd.wire.protocol import Message

SENTENCE = "Apply a tourniquet high and tight on the injured limb."
NO_NOISE = np.array([0.0, 1.0, 0.0], dtype=np.float32)  # noise, length, noise_w: deterministic output


@pytest.fixture(scope="module")
def voice_parts(tmp_path_factory: pytest.TempPathFactory):
    import onnxruntime
    from piper import PiperVoice

    whole = PiperVoice.load(default_voice_path())
    cut = PiecewiseVoice.load(default_voice_path(), onnxruntime.SessionOptions(), tmp_path_factory.mktemp("cache"))
    assert cut is not None, "the packaged voice is a VITS export the decoder cut fits"
    ids = whole.phonemes_to_ids(whole.phonemize(SENTENCE)[0])
    return whole, cut, ids


def test_the_cut_voice_makes_the_whole_voices_samples(voice_parts) -> None:
    whole, cut, ids = voice_parts
    expected = whole.session.run(None, {"input": np.array([ids], dtype=np.int64),
                                        "input_lengths": np.array([len(ids)], dtype=np.int64),
                                        "scales": NO_NOISE})[0].reshape(-1)
    assert np.array_equal(cut.decode(cut.latents(ids, NO_NOISE)), expected)


def test_pieces_join_into_the_whole_sentence(voice_parts) -> None:
    _, cut, ids = voice_parts
    latents = cut.latents(ids, NO_NOISE)
    pieces = list(cut.pieces(latents))
    whole = cut.decode(latents)
    assert len(pieces) >= 3  # a 55-character sentence: ~240 frames
    assert len(pieces[0]) == FIRST_FRAMES * cut.hop_samples
    joined = np.concatenate(pieces)
    assert len(joined) == len(whole)
    assert np.max(np.abs(joined - whole)) < 1e-5


@pytest.mark.parametrize("frames", [1, FIRST_FRAMES, 2 * FIRST_FRAMES - 1, 2 * FIRST_FRAMES, 97, 240, 1000])
def test_piece_bounds_cover_every_frame_once(frames: int) -> None:
    bounds = piece_bounds(frames)
    assert bounds[0][0] == 0 and bounds[-1][1] == frames
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    if len(bounds) > 1:
        assert bounds[0] == (0, FIRST_FRAMES)
        assert all(hi - lo >= FIRST_FRAMES for lo, hi in bounds)


def test_a_voice_the_cut_does_not_fit_is_left_whole(tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Identity", ["text"], ["audio"], name="only")], "other",
                              [helper.make_tensor_value_info("text", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 4])])
    path = tmp_path / "other.onnx"
    onnx.save(helper.make_model(graph), str(path))
    assert split_graph(path, tmp_path / "cache") is None


def test_the_first_sentence_leaves_in_pieces_and_nothing_clips(tmp_path: Path) -> None:
    with PluginHarness("piper", {"threads": 2, "volume": 4.0}, tmp_path) as piper:
        assert piper.plugin.health()["first_sentence_in_pieces"]
        replies = piper.request(Message("speak", data={"text": f"{SENTENCE} Heart rate one twenty."}, final=True))
    chunks, final = replies[:-1], replies[-1]
    assert [m.data["sentence"] for m in chunks][:3] == [1, 1, 1] and chunks[-1].data["sentence"] == 2
    assert [m.seq for m in replies] == list(range(1, len(replies) + 1))
    samples = np.frombuffer(b"".join(m.payload for m in chunks), dtype="<i2")
    # volume 4 would clip thousands of samples; the gain is lowered instead: at most a piece's own peak is at full
    # scale (clipping flattens a run of them)
    assert np.count_nonzero(np.abs(samples.astype(np.int32)) >= 32767) <= len(chunks)
    assert final.data["sentences"] == 2
    assert final.data["duration_s"] == pytest.approx(len(samples) / 22050, abs=1e-3)
