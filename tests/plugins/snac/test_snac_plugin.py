"""The snac stage end to end on a seeded random snac_24khz model, through the worker's own Stage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcccd.kit.plugin import PluginError
from tcccd.kit.testing import PluginHarness
from tcccd.plugins.snac.model import load_codes_decoder
from tcccd.plugins.snac.tokens import tokens_to_codebooks
from tcccd.wire.protocol import Message

from .test_tokens import random_tokens

FRAME = 2048
FRAMES = 16


@pytest.fixture(scope="module")
def snac(snac_weights_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    params = {"weights_dir": str(snac_weights_dir), "noise": False, "threads": 2}
    with PluginHarness("snac", params, tmp_path_factory.mktemp("snac")) as harness:
        yield harness


@pytest.fixture(scope="module")
def whole_decode(snac_weights_dir: Path):
    """The utterance decoded in one piece: what streaming must reproduce."""
    import torch

    module, _, _ = load_codes_decoder(snac_weights_dir, noise=False)

    def decode(tokens: list[int]) -> np.ndarray:
        with torch.inference_mode():
            return module(*(torch.from_numpy(c) for c in tokens_to_codebooks(tokens)))[0, 0].numpy()

    return decode


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    return float(10 * np.log10(np.sum(reference**2) / np.sum((reference - test) ** 2)))


def pcm(replies: list[Message]) -> np.ndarray:
    return np.concatenate([np.frombuffer(m.payload, "<i2") for m in replies if not m.final]).astype(np.float32) / 32767


def token_messages(tokens: list[int], per_message: int, request_id: str) -> list[Message]:
    starts = range(0, len(tokens), per_message)
    return [Message("speak.tokens", id=request_id, seq=k, data={"tokens": tokens[s: s + per_message]},
                    final=s + per_message >= len(tokens)) for k, s in enumerate(starts)]


def orpheus_window_snr(tokens: list[int], whole: np.ndarray, decode) -> float:
    """The reference's SNR: 4-frame windows keeping their second frame (frames 1..N-3)."""
    kept = [decode(tokens[7 * (f - 3): 7 * (f + 1)])[FRAME: 2 * FRAME] for f in range(3, len(tokens) // 7)]
    return snr_db(whole[FRAME: FRAME * (len(kept) + 1)], np.concatenate(kept))


def test_streamed_audio_matches_a_whole_decode_and_the_tail_is_flushed(snac: PluginHarness, whole_decode) -> None:
    tokens = random_tokens(FRAMES, seed=11)
    replies = snac.stream(token_messages(tokens, per_message=7, request_id="stream"))
    chunks, final = replies[:-1], replies[-1]
    assert all(m.type == "audio" and m.audio.sample_rate_hz == 24000 for m in replies)
    assert len(chunks) >= 3 and final.final
    audio = pcm(replies)
    assert len(audio) == FRAMES * FRAME
    assert final.data["frames"] == FRAMES and final.data["duration_s"] == pytest.approx(FRAMES * FRAME / 24000, 1e-3)
    whole = whole_decode(tokens)
    ours = snr_db(whole, audio)
    reference = orpheus_window_snr(tokens, whole, whole_decode)
    assert ours >= reference, (ours, reference)
    assert ours > 40


def test_first_audio_leaves_at_the_fourth_frame(snac: PluginHarness) -> None:
    messages = token_messages(random_tokens(6, seed=2), per_message=7, request_id="early")
    for k, message in enumerate(messages[:3]):
        assert snac.request(message) == [], f"audio before frame 4 at message {k}"
    [first] = snac.request(messages[3])
    assert first.type == "audio" and len(first.payload) > 0 and not first.final
    rest = snac.stream(messages[4:])
    assert rest[-1].final


def test_text_tokens_give_the_same_audio_as_integer_ids(snac: PluginHarness) -> None:
    tokens = random_tokens(8, seed=5)
    text = "".join(f"<custom_token_{n}>" for n in tokens)
    pieces = [text[i: i + 50] for i in range(0, len(text), 50)]
    by_text = snac.stream([Message("speak.tokens", id="t", seq=k, data={"text": p}, final=k == len(pieces) - 1)
                           for k, p in enumerate(pieces)])
    by_ids = snac.stream(token_messages(tokens, per_message=100, request_id="i"))
    assert np.array_equal(pcm(by_text), pcm(by_ids))


def test_out_of_range_code_is_an_error_for_that_request_only(snac: PluginHarness) -> None:
    tokens = random_tokens(10, seed=4)
    tokens[30] = 3
    tokens[31] = 10 + 3 * 4096 + 5000
    messages = token_messages(tokens, per_message=28, request_id="bad")
    replies = snac.stream(messages)
    errors = [m for m in replies if m.type == "error"]
    assert errors and errors[0].data["code"] == "bad_tokens" and errors[0].final
    assert "outside 0..4095" in errors[0].data["message"]
    assert all(m.type == "error" for m in replies[replies.index(errors[0]):])
    good = snac.stream(token_messages(random_tokens(5, seed=1), per_message=35, request_id="good"))
    assert good[-1].type == "audio" and good[-1].final and len(pcm(good)) == 5 * FRAME


@pytest.mark.parametrize("data", [{}, {"tokens": "12 13"}, {"tokens": [1.5]}, {"text": 7},
                                  {"tokens": [10], "text": ""}, {"tokens": [-1]}])
def test_malformed_requests_are_refused_clearly(snac: PluginHarness, data: dict) -> None:
    [reply] = snac.request(Message("speak.tokens", data=data, final=True))
    assert reply.type == "error" and reply.data["code"] == "bad_request"


def test_a_request_without_a_whole_frame_is_an_error(snac: PluginHarness) -> None:
    [reply] = snac.request(Message("speak.tokens", data={"text": "<custom_token_1><custom_token_12>"}, final=True))
    assert reply.type == "error" and reply.data["code"] == "no_tokens"


def test_missing_weights_dir_fails_setup_with_the_expected_layout(tmp_path: Path) -> None:
    harness = PluginHarness("snac", {"weights_dir": str(tmp_path / "nowhere")}, tmp_path)
    with pytest.raises(PluginError, match="config.json and pytorch_model.bin") as err:
        harness.__enter__()
    assert err.value.code == "no_weights"


def test_weights_dir_is_required() -> None:
    from pydantic import ValidationError

    from tcccd.plugins.snac.plugin import SnacPlugin

    with pytest.raises(ValidationError, match="weights_dir"):
        SnacPlugin.validate_params({})


def test_decoder_only_checkpoint_and_onnxruntime_give_the_same_audio(snac: PluginHarness, tmp_path: Path,
                                                                      whole_decode) -> None:
    from .conftest import save_random_snac

    weights = save_random_snac(tmp_path / "decoder_only", seed=0, decoder_only=True)
    tokens = random_tokens(6, seed=9)
    expected = pcm(snac.stream(token_messages(tokens, per_message=42, request_id="torch")))
    params = {"weights_dir": str(weights), "noise": False, "backend": "onnxruntime", "threads": 2}
    with PluginHarness("snac", params, tmp_path) as onnx:
        assert onnx.plugin.health()["backend"].startswith("onnxruntime")
        got = pcm(onnx.stream(token_messages(tokens, per_message=42, request_id="onnx")))
    assert len(got) == len(expected)
    assert np.max(np.abs(got - expected)) <= 2 / 32767
