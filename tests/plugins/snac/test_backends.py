"""Code population for the torch backend: codebooks gathered from a window's flat codes in cached buffers.

On CPU the same gather runs as on CUDA (only the staging copy differs), so interleaving window lengths here
checks that cached buffers never mix one window's codes into another's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tcccd.plugins.snac.backends import TorchBackend
from tcccd.plugins.snac.model import load_codes_decoder
from tcccd.plugins.snac.tokens import CodeStream, split_codebooks

from .test_tokens import random_tokens


@pytest.fixture(scope="module")
def module(snac_weights_dir: Path):
    return load_codes_decoder(snac_weights_dir, noise=False)[0]


@pytest.fixture(scope="module")
def stream() -> CodeStream:
    codes = CodeStream()
    codes.extend(np.array(random_tokens(40, seed=3), dtype=np.int64))
    return codes


def test_codebooks_match_the_numpy_layout(module, stream):
    backend = TorchBackend(module, "cpu", threads=2)
    for start, end in [(0, 4), (3, 9), (0, 1), (30, 40), (3, 9)]:
        ours = [b.numpy() for b in backend.codebooks(stream.window(start, end))]
        for got, expected in zip(ours, split_codebooks(stream.window(start, end)), strict=True):
            np.testing.assert_array_equal(got, expected)


def test_interleaved_window_lengths_decode_like_the_module(module, stream):
    import torch

    backend = TorchBackend(module, "cpu", threads=2)
    for start, end in [(0, 6), (2, 4), (0, 6), (10, 22), (2, 4)]:
        with torch.inference_mode():
            expected = module(*(torch.from_numpy(c) for c in split_codebooks(stream.window(start, end))))[0, 0]
        np.testing.assert_array_equal(backend.decode(stream.window(start, end)), expected.numpy())
