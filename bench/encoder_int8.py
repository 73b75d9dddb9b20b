"""Claim under test: a static, per-channel int8 Whisper encoder (ONNX Runtime, calibrated on the tuning set only)
runs faster on the CPU than the stage's fp32 graph without changing what the stage writes.

In one process: 1. the stage as shipped (PluginHarness('whisper', beam 5), its own cached fp32 graph) transcribes
the tune clips (espeak-ng + the kit's Piper voice at length_scale 1.0), keeping every encoder input it computes
(mel.py's log-mel windows) as calibration data; 2. quantize_static makes a QDQ graph per variant: per-channel s8
weights, u8 activations, weight MatMuls and Conv only (histograms collected two windows at a time: ~0.4 GB each);
3. the same stage, its encoder swapped clip by clip between fp32 and each int8 graph (order rotating), on real
speech (51 human clips; reporting), medical_eval_b (reporting) and tune: WER, invented clinical terms, numbers
written wrong, transcripts changed; 4. encoder time on the real-speech windows the stage encoded, 1 and 2 threads,
calls alternating; and ONNX Runtime session options for the fp32 encoder against the stage's own.

    .venv/bin/python bench/encoder_int8.py [--variants minmax-fp32mlp2,percentile-fp32mlp2] [--rounds 3]

Measured 2026-11-24 (b5d19c1, 2 shared cores, load 5.7 before / 6.4 after, 5-9 during; ratios in-run only):
- feature error |int8 - fp32| / |fp32|: attention products also int8 0.66, weight MatMuls + Conv 0.50, MLP's second
  Linear kept fp32: MinMax 0.12, Percentile 0.115 (tune and real alike; the dynamic int8 dropped earlier: 0.089).
- transcripts through the stage (beam 5; WER %, numbers written wrong, transcripts changed; fp32 / MinMax /
  Percentile): real 3.01 / 4.14 / 4.14 %, numbers 1 / 1 / 1, changed 8 and 6 of 51; medical_eval_b 28.3 / 27.1 /
  27.5 %, numbers wrong 6 / 16 / 13, changed 17 and 12 of 30; tune 29.2 / 32.8 / 29.5 %, changed 19 and 19 of 40.
  No invented clinical term in any. Every window the stage encoded was the full 3000 frames (audio_context full).
- encoder per 30 s window, fp32 / MinMax / Percentile: 1 thread 685 / 497 / 498 ms (0.73x), 2 threads 878 / 714 / 798 ms
  (0.81x / 0.91x; p99 2.5 / 1.2 / 1.4 s); the all-weights graph (unusable) was 0.83x in a smaller run.
- fp32 session options vs the stage's (2 threads, no spinning, one inter-op thread, no arena): spinning 1.32x,
  ORT_PARALLEL with 2 inter-op threads 2.50x, no memory pattern 1.89x, arena 0.96x (kept off: +18 MB measured
  earlier), 1 intra-op thread 0.82x (under this load; on a quiet box 2 threads should win: the lead's run decides).
Decision: not wired in. 10-27 % faster, but real-speech WER rises (3.0 -> 4.1 %) and numbers written wrong double.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr_corpus  # noqa: E402
from asr_review_metrics import medic_counts  # noqa: E402
from harness import percentiles  # noqa: E402

from tcccd.plugins.whisper.review.textnorm import corpus_wer  # noqa: E402
from tcccd.plugins.whisper.review.vocabulary import default_vocabulary_path, read_vocabulary  # noqa: E402

OUT = asr_corpus.ROOT / "bench" / "out" / "encoder-int8"
ASR_OUT = asr_corpus.ROOT / "bench" / "out" / "asr"  # bench/asr.py's clips, built once
METHODS = {"minmax": "MinMax", "percentile": "Percentile", "entropy": "Entropy"}
HISTOGRAM_STRIDE = 2  # windows per histogram pass: each holds ~0.4 GB of activations


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Recorder:
    """An encoder that keeps every mel the stage hands it, then encodes with the real one."""

    def __init__(self, encoder: Any) -> None:
        self.encoder, self.name, self.mels = encoder, encoder.name, []

    def features(self, mel: Any) -> np.ndarray:
        self.mels.append(np.array(mel, dtype=np.float32))
        return self.encoder.features(mel)


class MelReader:
    """onnxruntime.quantization.CalibrationDataReader over recorded mels, with the range API strided runs use."""

    def __init__(self, mels: list[np.ndarray]) -> None:
        self.mels, self.rows = mels, iter(mels)

    def __len__(self) -> int:
        return len(self.mels)

    def set_range(self, start_index: int, end_index: int) -> None:
        self.rows = iter(self.mels[start_index:end_index])

    def get_next(self) -> dict[str, np.ndarray] | None:
        mel = next(self.rows, None)
        return None if mel is None else {"mel": mel}


def stage() -> Any:
    from tcccd.kit.testing import PluginHarness

    return PluginHarness("whisper", {"beam_size": 5}, OUT / "stage").__enter__()


def transcribe(harness: Any, path: Path) -> dict:
    from tcccd.wire.protocol import AudioFormat, Message

    [reply] = harness.request(Message("transcribe", payload=path.read_bytes(), final=True, audio=AudioFormat("wav")))
    return reply.data


def calibration_mels(harness: Any) -> list[np.ndarray]:
    """The stage's encoder inputs on the tuning clips (espeak tune + Piper tune at 1.0), cached in bench/out."""
    cached = OUT / "calibration-mels.npy"
    if cached.is_file():
        return list(np.load(cached))
    engine = harness.plugin._transcriber.engine
    recorder = engine.encoder = Recorder(engine.encoder)
    clips = asr_corpus.build_split("tune", ASR_OUT)
    clips += [c for c in asr_corpus.build_piper_split("tune", OUT) if c.path.stem.endswith("-1.0")]
    for clip in clips:
        transcribe(harness, clip.path)
    engine.encoder = recorder.encoder
    shapes = Counter(m.shape for m in recorder.mels)
    print(f"calibration: {len(clips)} tune clips -> {len(recorder.mels)} encoder windows, shapes {dict(shapes)}")
    np.save(cached, np.stack(recorder.mels))
    return recorder.mels


def weight_nodes(fp32_path: Path, keep_fp32: str) -> list[str]:
    """Conv and MatMul nodes whose second input is a weight, minus those whose name holds `keep_fp32`.

    Named explicitly: in QDQ format MatMulConstBOnly is not honoured, and quantizing attention's q.k and
    softmax.v products (u8 per tensor over 1500 positions) alone put the features 36 % off."""
    import onnx

    model = onnx.load(str(fp32_path))
    weights = {i.name for i in model.graph.initializer}
    return [n.name for n in model.graph.node if n.op_type in ("MatMul", "Conv") and n.input[1] in weights
            and not (keep_fp32 and keep_fp32 in n.name)]


def quantize(fp32_path: Path, mels: list[np.ndarray], variant: str) -> Path:
    """variant: '<method>' or '<method>-fp32mlp2' (the MLP's second Linear kept fp32: its input, GELU's output,
    holds Whisper's outlier channels, which one u8 scale per tensor cannot carry)."""
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    method, _, keep = variant.partition("-")
    out = OUT / f"encoder-int8-{variant}.onnx"
    if out.is_file():
        return out
    started = time.perf_counter()
    quantize_static(str(fp32_path), str(out), MelReader(mels), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    nodes_to_quantize=weight_nodes(fp32_path, "mlp.2" if keep == "fp32mlp2" else ""),
                    calibrate_method=getattr(CalibrationMethod, METHODS[method]),
                    calibration_cache_path=str(OUT / f"calibration-{method}.json"),
                    extra_options={"CalibStridedMinMax": HISTOGRAM_STRIDE})
    print(f"quantized ({variant}) in {time.perf_counter() - started:.0f} s -> {out.name} "
          f"({out.stat().st_size / 1e6:.1f} MB, fp32 {fp32_path.stat().st_size / 1e6:.1f} MB)")
    return out


def feature_error(fp32: Any, int8: Any, mels: list[np.ndarray]) -> float:
    """Relative error of the int8 features: ||int8 - fp32|| / ||fp32||, over the given windows."""
    errors = [np.linalg.norm(int8.features(m) - ref) / np.linalg.norm(ref)
              for m in mels for ref in [fp32.features(m)]]
    return float(np.mean(errors))


def compare_transcripts(harness: Any, encoders: dict[str, Any], splits: dict[str, list]) -> tuple[dict, list]:
    """Every clip through the stage once per encoder, the order rotating per clip; and the real-speech windows."""
    engine, terms = harness.plugin._transcriber.engine, read_vocabulary(default_vocabulary_path())
    recorder = Recorder(encoders["fp32"])
    names = list(encoders)
    rows: dict = {}
    for split, clips in splits.items():
        per = {n: {"pairs": [], "counts": Counter(), "encode_ms": [], "total_ms": []} for n in names}
        for k, clip in enumerate(clips):
            for name in names[k % len(names):] + names[:k % len(names)]:
                engine.encoder = recorder if (name == "fp32" and split == "real") else encoders[name]
                reply = transcribe(harness, clip.path)
                per[name]["pairs"].append((clip.reference, reply["text"]))
                per[name]["counts"].update(medic_counts(clip.reference, reply, terms))
                per[name]["encode_ms"].append(reply["timings_ms"].get("encode_ms", 0.0))
                per[name]["total_ms"].append(reply["timings_ms"].get("total_ms", 0.0))
        rows[split] = per
    engine.encoder = encoders["fp32"]
    return rows, recorder.mels


def time_encoders(paths: dict[str, Path], mels: list[np.ndarray], threads: int, rounds: int) -> dict:
    """ms per window for each graph through the stage's OnnxEncoder, calls alternating window by window."""
    from tcccd.plugins.whisper.engine.encoders import OnnxEncoder

    encoders = {n: OnnxEncoder(p, threads) for n, p in paths.items()}
    times: dict[str, list[float]] = {n: [] for n in encoders}
    for e in encoders.values():
        e.features(mels[0])  # warm-up
    for r in range(rounds):
        for k, mel in enumerate(mels):
            order = list(encoders) if (k + r) % 2 == 0 else list(encoders)[::-1]
            for name in order:
                started = time.perf_counter()
                encoders[name].features(mel)
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def option_sessions(path: Path, threads: int) -> dict[str, Any]:
    """The stage's session options, and one change each."""
    import onnxruntime as ort

    def session(spin: str = "0", inter: int = 1, parallel: bool = False, arena: bool = False,
                pattern: bool = True, intra: int = threads) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = intra, inter
        options.enable_cpu_mem_arena, options.enable_mem_pattern = arena, pattern
        options.add_session_config_entry("session.intra_op.allow_spinning", spin)
        if parallel:
            options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    return {"stage": session(), "spinning": session(spin="1"), "parallel-inter2": session(inter=2, parallel=True),
            "arena": session(arena=True), "no-mem-pattern": session(pattern=False), "intra1": session(intra=1)}


def time_sessions(sessions: dict[str, Any], mels: list[np.ndarray], rounds: int) -> dict:
    times: dict[str, list[float]] = {n: [] for n in sessions}
    for s in sessions.values():
        s.run(["features"], {"mel": mels[0]})
    for r in range(rounds):
        for k, mel in enumerate(mels):
            names = list(sessions)[(k + r) % len(sessions):] + list(sessions)[:(k + r) % len(sessions)]
            for name in names:
                started = time.perf_counter()
                sessions[name].run(["features"], {"mel": mel})
                times[name].append((time.perf_counter() - started) * 1000)
    return times


def report_times(label: str, times: dict[str, list[float]], reference: str) -> dict:
    ref = statistics.median(times[reference])
    summary = {}
    for name, values in times.items():
        med, p99 = percentiles(values)
        summary[name] = {"median_ms": round(med, 1), "p99_ms": round(p99, 1), "ratio": round(med / ref, 3)}
        print(f"  {label:<10} {name:<18} median {med:7.1f} ms  p99 {p99:7.1f} ms  {med / ref:.3f}x {reference}")
    return summary


def report_transcripts(rows: dict) -> dict:
    summary: dict = {}
    for split, per in rows.items():
        fp32 = [hyp for _, hyp in per["fp32"]["pairs"]]
        for name, r in per.items():
            changed = [(ref, a, b) for (ref, b), a in zip(r["pairs"], fp32, strict=True) if a != b]
            row = summary.setdefault(split, {})[name] = {
                "wer": round(100 * corpus_wer(r["pairs"]), 2), "invented": r["counts"]["invented"],
                "numbers_wrong": r["counts"]["numbers_wrong"], "changed": len(changed),
                "encode_ms_median": round(statistics.median(r["encode_ms"])),
                "total_ms_median": round(statistics.median(r["total_ms"]))}
            print(f"  {split:<15} {name:<12} " + "  ".join(f"{k} {v}" for k, v in row.items()))
            for ref, a, b in changed[:8] if name != "fp32" else ():
                print(f"      ref: {ref}\n      fp32: {a}\n      {name}: {b}")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="minmax-fp32mlp2,percentile-fp32mlp2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--windows", type=int, default=12, help="real-speech windows timed per round")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    results: dict = {"load_before": loadavg()}
    harness = stage()
    fp32 = harness.plugin._transcriber.engine.encoder
    mels = calibration_mels(harness)
    paths = {"fp32": fp32.path}
    for variant in args.variants.split(","):
        paths[f"int8-{variant}"] = quantize(fp32.path, mels, variant)
    from tcccd.plugins.whisper.engine.encoders import OnnxEncoder

    encoders = {n: fp32 if n == "fp32" else OnnxEncoder(p, fp32.session.get_session_options().intra_op_num_threads)
                for n, p in paths.items()}
    results["feature_rel_error_tune"] = {n: feature_error(fp32, e, mels[:8]) for n, e in encoders.items()}
    built = {split: asr_corpus.build_split(split, ASR_OUT) for split in ("medical_eval_b", "tune")}
    splits = {"real": asr_corpus.real_speech(), **built}
    rows, real_mels = compare_transcripts(harness, encoders, splits)
    print(f"real-speech windows the stage encoded: {dict(Counter(m.shape for m in real_mels))}")
    results["feature_rel_error_real"] = {n: feature_error(fp32, e, real_mels[:8]) for n, e in encoders.items()}
    print("feature relative error (tune, real):", {n: (round(results["feature_rel_error_tune"][n], 4),
                                                      round(results["feature_rel_error_real"][n], 4)) for n in paths})
    results["transcripts"] = report_transcripts(rows)
    timed = real_mels[:: max(1, len(real_mels) // args.windows)][: args.windows]
    for threads in (1, 2):
        results[f"encoder_threads{threads}"] = report_times(f"threads {threads}", time_encoders(
            paths, timed, threads, args.rounds), "fp32")
    results["session_options"] = report_times("options", time_sessions(option_sessions(fp32.path, 2), timed,
                                                                       args.rounds), "stage")
    results["load_after"] = loadavg()
    print("load before / after:", results["load_before"], "/", results["load_after"])
    harness.__exit__(None, None, None)
    (OUT / "results.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
