"""Claim under test (onnx_decoder.OnnxSteps): the ONNX decoder's graphs on the stage's 2 threads transcribe
faster than on one, with the same text.

One whisper stage (PluginHarness, beam 5, threads 2, as shipped); its decoder's three sessions (step, cross,
projection) are built twice from the same cached graphs, on 1 and on 2 intra-op threads, and swapped in clip by
clip, the order alternating, so both see the same load. Sets: the 51 real clips and the 45 s recording
(bench/asr_corpus.py), `--rounds` times. Prints medians, p99 and the ratio, and how many texts differ.

    .venv/bin/python bench/asr_decoder_threads.py [--rounds 1] [--long-rounds 2]    (~3 min on 2 shared cores)

Measured (load 1.1-1.5, --long-rounds 3): real clips median 0.494 -> 0.453 s (0.92x), p99 1.99 -> 1.68 s; 45 s
5.22 -> 4.72 s (0.90x); texts differing 0 of 51 and 0 of 3.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr_corpus  # noqa: E402
from harness import percentiles  # noqa: E402

OUT = asr_corpus.ROOT / "bench" / "out" / "asr"


def main() -> None:
    from tcccd.kit.testing import PluginHarness
    from tcccd.plugins.whisper.engine.onnx_decoder import _session
    from tcccd.wire.protocol import AudioFormat, Message

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--long-rounds", type=int, default=2)
    args = parser.parse_args()
    real = [c.path for c in asr_corpus.real_speech()]
    long = asr_corpus.build_long(OUT, split="medical_eval_b").path
    with PluginHarness("whisper", {"beam_size": 5, "threads": 2}, Path(tempfile.mkdtemp())) as harness:
        steps = harness.plugin._transcriber.engine.steps
        graphs = [Path(s._model_path) for s in (steps.step, steps.cross_session, steps.proj)]
        sessions = {threads: [_session(p, threads) for p in graphs] for threads in (1, 2)}

        def transcribe(path: Path, threads: int) -> tuple[float, str]:
            steps.step, steps.cross_session, steps.proj = sessions[threads]
            t0 = time.perf_counter()
            reply = harness.request(Message("transcribe", payload=path.read_bytes(), final=True,
                                            audio=AudioFormat("wav")))[0].data
            return time.perf_counter() - t0, reply["text"]

        transcribe(real[0], 1)
        transcribe(real[0], 2)
        print(f"load at start: {os.getloadavg()[0]:.1f}", flush=True)
        for label, clips, rounds in (("real clips", real, args.rounds), ("45 s recording", [long], args.long_rounds)):
            times: dict[int, list[float]] = {1: [], 2: []}
            texts: dict[int, list[str]] = {1: [], 2: []}
            for k in range(rounds):
                for i, clip in enumerate(clips):
                    for threads in (1, 2) if (i + k) % 2 == 0 else (2, 1):
                        elapsed, text = transcribe(clip, threads)
                        times[threads].append(elapsed)
                        texts[threads].append(text)
            (m1, p1), (m2, p2) = percentiles(times[1]), percentiles(times[2])
            differ = sum(a != b for a, b in zip(texts[1], texts[2], strict=True))
            print(f"{label}: {len(times[1])} each; median / p99 s: 1 thread {m1:.3f} / {p1:.3f}, 2 threads "
                  f"{m2:.3f} / {p2:.3f}; 2/1 median {m2 / m1:.2f}x; texts differing {differ}", flush=True)
    print(f"load at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
