"""SNAC on the GPU: CUDA in FP16 against the FP32 CPU decode (needs a CUDA device; `make test-gpu`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tcccd.kit.testing import PluginHarness
from tcccd.plugins.snac.backends import TorchBackend
from tcccd.plugins.snac.model import load_codes_decoder
from tcccd.plugins.snac.tokens import CodeStream
from tcccd.wire.protocol import Message

from .test_snac_plugin import pcm, snr_db, token_messages
from .test_tokens import random_tokens

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]
MIN_SNR_DB = 40.0


@pytest.fixture(scope="module")
def backends(snac_weights_dir: Path):
    cpu = TorchBackend(load_codes_decoder(snac_weights_dir, noise=False)[0], "cpu", threads=2)
    cuda = TorchBackend(load_codes_decoder(snac_weights_dir, noise=False)[0], "cuda", threads=2, dtype="float16")
    return cpu, cuda


@pytest.mark.parametrize("frames", [4, 12, 28])
def test_fp16_window_decode_keeps_40_db(backends, frames):
    cpu, cuda = backends
    stream = CodeStream()
    stream.extend(np.array(random_tokens(frames, seed=frames), dtype=np.int64))
    reference = cpu.decode(stream.window(0, frames))
    ours = cuda.decode(stream.window(0, frames))
    assert cuda.name == "torch-cuda-float16" and ours.shape == reference.shape
    assert snr_db(reference, ours) >= MIN_SNR_DB


def test_streamed_fp16_speech_matches_the_fp32_whole_decode(snac_weights_dir, backends, tmp_path):
    tokens = random_tokens(40, seed=11)
    stream = CodeStream()
    stream.extend(np.array(tokens, dtype=np.int64))
    whole = backends[0].decode(stream.window(0, 40))
    params = {"weights_dir": str(snac_weights_dir), "noise": False, "device": "cuda",
              "context_frames": 3, "lookahead_frames": 3}
    with PluginHarness("snac", params, tmp_path) as harness:
        assert harness.plugin.health()["backend"] == "torch-cuda-float16"
        replies = harness.stream(token_messages(tokens, 21, "r1"))
    final = replies[-1]
    assert final.final and final.data["frames"] == 40 and isinstance(final, Message)
    assert snr_db(whole, pcm(replies)) >= MIN_SNR_DB - 1  # 16-bit PCM on the wire costs a little
