"""Engine micro-benchmarks: Whisper tiny.en encoder per backend, full 30 s window vs truncated
context, for a 4 s clip; and the log-mel front end, skipping padding frames vs the full openai way.

Run: .venv/bin/python bench/asr_engine.py [--repeats 20] [--threads 2]
Prints medians and p99 in ms and the ratio of each row to its reference row (measured in the same run).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import torch
from harness import percentiles, timed_ms

CLIP_S = 4.0
MARGIN_FRAMES = 100


def full_mel(audio: np.ndarray) -> torch.Tensor:
    """openai's log_mel_spectrogram(audio, padding=N_SAMPLES) as written there: the reference."""
    from tcccd.plugins.whisper.engine.mel import N_SAMPLES, mel_filters

    padded = torch.nn.functional.pad(torch.from_numpy(audio), (0, N_SAMPLES))
    stft = torch.stft(padded, 400, 160, window=torch.hann_window(400), return_complex=True)
    log_spec = torch.clamp(torch.from_numpy(mel_filters(80)) @ (stft[..., :-1].abs() ** 2), min=1e-10).log10()
    return (torch.maximum(log_spec, log_spec.max() - 8.0) + 4.0) / 4.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from tcccd.plugins.whisper.engine.convert import embedded_model_dir, read_model_source
    from tcccd.plugins.whisper.engine.encoders import Ct2Engine, OnnxEncoder, TorchEncoder, onnx_path
    from tcccd.plugins.whisper.engine.mel import log_mel_spectrogram
    from tcccd.plugins.whisper.engine.model import build_model

    rng = np.random.default_rng(0)
    t = np.arange(int(CLIP_S * 16000)) / 16000
    audio = (0.1 * np.sin(2 * np.pi * 180 * t) * (1 + np.sin(2 * np.pi * 3 * t)) +
             0.01 * rng.standard_normal(t.size)).astype(np.float32)
    rows: list[tuple[str, list[float], str]] = []
    rows.append(("mel full 30 s pad (openai way)", timed_ms(lambda: full_mel(audio), args.repeats), "mel-ref"))
    rows.append(("mel skip padding frames", timed_ms(lambda: log_mel_spectrogram(audio), args.repeats), "mel"))

    mel = log_mel_spectrogram(audio)
    content = mel.shape[-1] - 3000
    truncated = content + MARGIN_FRAMES + (content + MARGIN_FRAMES) % 2
    windows = {"full 30 s": torch.from_numpy(np.ascontiguousarray(mel[None, :, :3000])),
               f"auto {truncated} frames": torch.from_numpy(np.ascontiguousarray(mel[None, :, :truncated]))}
    source = read_model_source(None)
    model = build_model(source.dims, source.state)
    with tempfile.TemporaryDirectory() as cache:
        backends = {"torch": TorchEncoder(model.encoder, args.threads),
                    "onnxruntime": OnnxEncoder(onnx_path(Path(cache), source.state), args.threads, model.encoder),
                    "ctranslate2 int8": Ct2Engine(embedded_model_dir(), "cpu", args.threads)}
        for name, backend in backends.items():
            for window_name, window in windows.items():
                kind = "enc-ref" if name == "torch" and window_name == "full 30 s" else "enc"
                rows.append((f"encoder {name}, {window_name}",
                             timed_ms(lambda b=backend, w=window: b.encode(w), args.repeats), kind))
    print_table(rows, args)


def print_table(rows: list[tuple[str, list[float], str]], args: argparse.Namespace) -> None:
    reference = {"mel": "mel-ref", "mel-ref": "mel-ref", "enc": "enc-ref", "enc-ref": "enc-ref"}
    medians = {kind: percentiles(samples)[0] for _, samples, kind in rows if kind.endswith("-ref")}
    print(f"# Whisper tiny.en engine, {CLIP_S:.0f} s clip, {args.threads} threads, {args.repeats} repeats")
    print(f"{'what':48s} {'median ms':>10s} {'p99 ms':>9s} {'x reference':>12s}")
    for name, samples, kind in rows:
        median, p99 = percentiles(samples)
        print(f"{name:48s} {median:10.2f} {p99:9.2f} {median / medians[reference[kind]]:12.3f}")
    print("reference rows: 'mel full 30 s pad (openai way)' and 'encoder torch, full 30 s'")


if __name__ == "__main__":
    main()
