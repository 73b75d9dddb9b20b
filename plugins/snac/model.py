"""Loading a SNAC checkpoint as a codes-to-audio module, ready for fast inference.

Only the quantizer's codebooks and the decoder are needed to turn codes into
audio, so a decoder-only checkpoint loads as well as the full
hubertsiuzdak/snac_24khz layout. Weight norm is folded into plain weights at
load: it is recomputed on every forward otherwise, for nothing, at inference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tcccd.kit.plugin import PluginError

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "pytorch_model.bin"
_NEEDED_PREFIXES = ("quantizer.", "decoder.")
ORPHEUS_VQ_STRIDES = [4, 2, 1]


def check_weights_dir(weights_dir: Path) -> None:
    """Fail with what is missing and what layout is expected, before any torch import."""
    missing = [name for name in (CONFIG_FILE, WEIGHTS_FILE) if not (weights_dir / name).is_file()]
    if not weights_dir.is_dir() or missing:
        what = "does not exist" if not weights_dir.is_dir() else f"lacks {', '.join(missing)}"
        raise PluginError(
            f"SNAC weights_dir {str(weights_dir)!r} {what}; expected a directory in the layout of "
            f"hubertsiuzdak/snac_24khz holding {CONFIG_FILE} and {WEIGHTS_FILE} (no weights ship with tcccd)",
            code="no_weights",
        )


def load_codes_decoder(weights_dir: Path, noise: bool) -> tuple[Any, int, int]:
    """A torch module (codes0, codes1, codes2) -> audio (batch, 1, samples), its rate in Hz, samples per frame."""
    import torch
    from snac import SNAC

    check_weights_dir(weights_dir)
    try:
        config = json.loads((weights_dir / CONFIG_FILE).read_text())
        model = SNAC(**config)
        state = torch.load(weights_dir / WEIGHTS_FILE, map_location="cpu", weights_only=True)
    except (ValueError, TypeError, RuntimeError, OSError) as exc:
        raise PluginError(f"cannot read the SNAC checkpoint in {str(weights_dir)!r}: {exc}",
                          code="bad_weights") from None
    if list(model.vq_strides) != ORPHEUS_VQ_STRIDES:
        raise PluginError(f"the SNAC model in {str(weights_dir)!r} has vq_strides {model.vq_strides}; Orpheus "
                          f"tokens need {ORPHEUS_VQ_STRIDES} (the snac_24khz layout)", code="bad_weights")
    _load_decoder_state(model, state, weights_dir)
    module = _CodesDecoder(model, noise).eval()
    _fold_weight_norm(module)
    samples_per_frame = int(model.hop_length) * ORPHEUS_VQ_STRIDES[0]
    return module, int(model.sampling_rate), samples_per_frame


def _load_decoder_state(model: Any, state: dict[str, Any], weights_dir: Path) -> None:
    result = model.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if k.startswith(_NEEDED_PREFIXES)]
    if missing or result.unexpected_keys:
        raise PluginError(
            f"the SNAC checkpoint in {str(weights_dir)!r} does not match its config.json: "
            f"missing {missing[:5]}, unexpected {result.unexpected_keys[:5]}; expected the quantizer and "
            f"decoder weights of the model config.json describes",
            code="bad_weights",
        )


def _fold_weight_norm(module: Any) -> None:
    from torch.nn.utils import parametrize

    for sub in module.modules():
        if parametrize.is_parametrized(sub, "weight"):
            parametrize.remove_parametrizations(sub, "weight", leave_parametrized=True)


def _CodesDecoder(model: Any, noise: bool) -> Any:  # noqa: N802 - builds a class that needs torch
    """Wrap quantizer + decoder; swap SNAC's noise blocks for exportable (or no) noise."""
    import torch
    from snac.layers import NoiseBlock, Snake1d

    class NoiseLike(torch.nn.Module):
        """SNAC's NoiseBlock, with randn_like so ONNX export keeps the time axis dynamic."""

        def __init__(self, block: Any) -> None:
            super().__init__()
            self.linear = block.linear

        def forward(self, x: Any) -> Any:
            return x + torch.randn_like(x[:, :1, :]) * self.linear(x)

    class Snake(torch.nn.Module):
        """SNAC's Snake1d without its scripted reshape, which ONNX tracing freezes to one length."""

        def __init__(self, block: Any) -> None:
            super().__init__()
            self.alpha = block.alpha

        def forward(self, x: Any) -> Any:
            return x + (self.alpha + 1e-9).reciprocal() * torch.sin(self.alpha * x).pow(2)

    for parent in list(model.decoder.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, NoiseBlock):
                setattr(parent, name, NoiseLike(child) if noise else torch.nn.Identity())
            elif isinstance(child, Snake1d):
                setattr(parent, name, Snake(child))

    class CodesDecoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.quantizer = model.quantizer
            self.decoder = model.decoder

        def forward(self, codes0: Any, codes1: Any, codes2: Any) -> Any:
            return self.decoder(self.quantizer.from_codes([codes0, codes1, codes2]))

    return CodesDecoder()
