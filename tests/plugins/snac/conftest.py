"""A seeded, randomly initialised SNAC model in the snac_24khz layout, built once per session.

No SNAC weights can be downloaded here, so tests save a random model the way
the real checkpoint is laid out and load it through the plugin's own code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SNAC_24KHZ_CONFIG = {
    "sampling_rate": 24000, "encoder_dim": 48, "encoder_rates": [2, 4, 8, 8], "decoder_dim": 1024,
    "decoder_rates": [8, 8, 4, 2], "attn_window_size": None, "codebook_size": 4096, "codebook_dim": 8,
    "vq_strides": [4, 2, 1], "noise": True, "depthwise": True,
}


def save_random_snac(directory: Path, seed: int = 0, decoder_only: bool = False) -> Path:
    import torch
    from snac import SNAC

    torch.manual_seed(seed)
    model = SNAC(**SNAC_24KHZ_CONFIG)
    state = model.state_dict()
    if decoder_only:
        state = {k: v for k, v in state.items() if not k.startswith("encoder.")}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(SNAC_24KHZ_CONFIG))
    torch.save(state, directory / "pytorch_model.bin")
    return directory


@pytest.fixture(scope="session")
def snac_weights_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_random_snac(tmp_path_factory.mktemp("snac_24khz_random"))
