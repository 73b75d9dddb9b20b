"""The GPU path's claims, every backend side by side in one run; what this machine lacks says so.

  encoder    Whisper tiny.en encoder on 5 s (audio_context auto: 600 frames) and 30 s (3000 frames) of mel:
             torch CPU FP32, onnxruntime CPU, torch CUDA FP16, TensorRT (profile 'field' precision).
  utterance  one ~5 s espeak-ng utterance end to end (mel, encode, greedy decode), per backend.
  memory     what loading each backend cost: peak RSS above the start, and the CUDA allocator's peak.
  build      TensorRT engine build from the ONNX export: cold, then again with the timing cache.
  snac       the snac stage on CUDA FP16 (seeded random snac_24khz weights, as bench/tts.py): RTF, first audio.
Anchor for the Jetson (whisper_trt, Orin Nano): tiny.en, 20 s of audio in 0.64 s, 488 MB (RSS delta).
Usage: python bench/gpu.py [--repeats 10] [--threads 2]

Measured on the lent GPU machine (one NVIDIA H200, driver 580.159.04, python3.12 with torch 2.11.0+cu130 and
onnxruntime 1.30; tcccd's own dependencies and Whisper tiny.en carried as wheels and files; espeak-ng's renderings of
the two sentences carried from the development machine), --repeats 5, 2 CPU threads, commit 51150cb. Encoder ms
median / p99, 5 s and 30 s: torch CPU fp32 34.6 / 35.6 and 245.3 / 254.5; onnxruntime CPU 40.0 / 41.9 and
285.5 / 297.7; torch CUDA fp16 3.0 / 3.4 and 2.3 / 2.6 (107x the CPU at 30 s). Utterance end to end (6.3 s): torch
CPU 297.1 / 301.0 ms (+344 MB RSS), onnxruntime CPU 199.1 / 287.3 ms (+201 MB), torch CUDA fp16 52.2 / 59.4 ms
(+318 MB RSS, 73 MB CUDA peak); CUDA wrote "breathing" where both CPU rows wrote "reeling". TensorRT: not
installable there. SNAC on CUDA FP16 (random weights, 9.6 s): RTF 0.005, first audio 4.6 ms after frame 4, 151 MB
CUDA peak. The `gpu` tests (tests/plugins/whisper/engine/test_cuda.py, tests/plugins/snac/test_cuda.py): 7 passed,
the TensorRT one skipped. An H100 gave the same within a few percent. None of this is the Jetson: it shows the CUDA
paths run and agree. Again at 08c997f on an H200 (same image, --repeats 5): encoder torch CUDA fp16 1.4 / 1.6 and
1.6 / 2.0 ms (torch CPU 30.3 / 31.1 and 174.8 / 181.6); utterance CUDA fp16 54.3 / 64.7 ms (torch CPU 190.3 / 223.0,
onnxruntime CPU 186.4 / 215.5); SNAC RTF 0.008, first audio 5.4 ms; the gpu tests 7 passed, 1 skipped.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from harness import percentiles, timed_ms

sys.path.insert(0, str(Path(__file__).resolve().parent))

BACKENDS = (("torch CPU fp32", "torch", "cpu"), ("onnxruntime CPU", "onnxruntime", "cpu"),
            ("torch CUDA fp16", "torch", "cuda"), ("TensorRT fp16", "tensorrt", "cuda"))
UTTERANCE = "Check airway. Patient breathing, eighteen per minute. Prepare needle decompression kit."
NOT_HERE = "not available here"


def speech_16k(text: str, tmp: Path) -> np.ndarray:
    import soundfile
    import soxr

    wav = tmp / "utterance.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(wav), text], check=True)
    audio, rate_hz = soundfile.read(wav, dtype="float32")
    return soxr.resample(audio, rate_hz, 16000).astype(np.float32)


def load_backends(cache: Path, threads: int) -> dict[str, Any]:
    """label -> (transcriber, MemoryTracker) or the reason it cannot load here (no fallbacks: we want the truth)."""
    from tcccd.kit.memory_tracker import MemoryTracker
    from tcccd.kit.plugin import PluginError
    from tcccd.plugins.whisper.engine.transcriber import Transcriber

    loaded: dict[str, Any] = {}
    for label, backend, device in BACKENDS:
        try:
            with MemoryTracker(label) as memory:
                loaded[label] = (Transcriber.load(None, backend=backend, device=device, cache_dir=cache,
                                                  threads=threads, decoder_int8=device == "cpu"), memory)
        except PluginError as error:
            loaded[label] = f"{NOT_HERE} ({str(error)[:110]})"
    return loaded


def synced(fn: Any) -> Any:
    """fn, then wait for the GPU: CUDA calls return before the work is done."""
    import torch

    def run() -> None:
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()

    return run


def bench_encoders(loaded: dict[str, Any], audio: np.ndarray, repeats: int) -> None:
    from tcccd.plugins.whisper.engine.mel import log_mel_spectrogram

    mel = log_mel_spectrogram(audio, 80)
    print("\nencoder latency, ms median / p99")
    print(f"{'backend':18} {'5 s (600 frames)':>18} {'30 s (3000 frames)':>20}")
    for label, entry in loaded.items():
        if isinstance(entry, str):
            print(f"{label:18} {entry}")
            continue
        encoder = entry[0].engine.encoder
        cells = []
        for frames in (600, 3000):
            window = mel[:, :frames][None]
            median, p99 = percentiles(timed_ms(synced(lambda w=window, e=encoder: e.encode(w)), repeats, warmup=2))
            cells.append(f"{median:8.1f} / {p99:6.1f}")
        print(f"{label:18} {cells[0]:>18} {cells[1]:>20}")


def bench_utterance(loaded: dict[str, Any], audio: np.ndarray, repeats: int) -> None:
    from tcccd.plugins.whisper.engine.transcriber import DecodeOptions

    options = DecodeOptions(beam_size=1, temperatures=(0.0,), audio_context="auto")
    print(f"\nutterance end to end ({len(audio) / 16000:.1f} s of espeak-ng speech, greedy), ms median / p99; "
          "CPU rows decode with the int8 decoder as the plugin does; load memory: peak RSS above start, CUDA peak")
    for label, entry in loaded.items():
        if isinstance(entry, str):
            print(f"{label:18} {entry}")
            continue
        transcriber, memory = entry
        text = transcriber.transcribe(audio, options).text
        median, p99 = percentiles(timed_ms(synced(lambda t=transcriber: t.transcribe(audio, options)), repeats))
        cuda_mb = memory.as_dict()["cuda_peak_mb"]
        print(f"{label:18} {median:8.1f} / {p99:6.1f}   load +{memory.as_dict()['peak_delta_mb']} MB RSS, "
              f"CUDA {cuda_mb if cuda_mb is not None else '-'} MB   {text!r}")


def bench_build(cache: Path) -> None:
    print("\nTensorRT engine build (profile 'field')")
    try:
        import tensorrt  # noqa: F401
        import torch

        if not torch.cuda.is_available():
            raise ImportError("torch sees no CUDA device")
    except ImportError as error:
        print(f"  {NOT_HERE} ({error})")
        return
    from tcccd.kit.accel import build_engine, precision_for
    from tcccd.plugins.whisper.engine.tensorrt_encoder import shape_profile

    [onnx] = sorted(cache.glob("whisper-encoder-*.onnx"))
    builds = cache / "builds"
    for attempt in ("cold", "with timing cache"):
        for engine in builds.glob("*.engine"):
            engine.unlink()
        result = build_engine(onnx, shape_profile(80), precision_for("field"), builds, name="bench")
        print(f"  {attempt:18} {result.build_s:7.1f} s  (timing cache reused: {result.timing_cache_entries_reused})")


def bench_snac(repeats: int) -> None:
    import torch

    print("\nSNAC on CUDA FP16, streaming through the stage (random weights, 112 frames = 9.6 s of audio)")
    if not torch.cuda.is_available():
        print(f"  {NOT_HERE} (torch sees no CUDA device)")
        return
    from tts import _save_random_snac, random_tokens, run_tcccd_stream

    from tcccd.kit.testing import PluginHarness

    with tempfile.TemporaryDirectory() as tmp:
        weights = _save_random_snac(Path(tmp))
        params = {"weights_dir": str(weights), "noise": False, "device": "cuda"}
        with PluginHarness("snac", params, Path(tmp) / "h") as harness:
            runs = [run_tcccd_stream(harness, random_tokens(112, seed=run, low=1), run) for run in range(repeats)]
        peak_mb = torch.cuda.max_memory_allocated() / 2**20
    rtf = [wall_s / (len(audio) / 24000) for audio, wall_s, _ in runs]
    first = [first_ms for _, _, first_ms in runs]
    print(f"  RTF median {np.median(rtf):.3f}, first audio after frame 4: median {np.median(first):.1f} ms, "
          f"CUDA allocator peak {peak_mb:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device"
    print(f"torch {torch.__version__}, {device}, {args.threads} CPU threads")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        audio = speech_16k(UTTERANCE, cache)
        loaded = load_backends(cache, args.threads)
        bench_encoders(loaded, audio, args.repeats)
        bench_utterance(loaded, audio, args.repeats)
        bench_build(cache)
    bench_snac(max(1, args.repeats // 3))


if __name__ == "__main__":
    main()
