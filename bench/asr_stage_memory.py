"""The ASR worker's peak memory as deployed, every check of the record on: short clips, then the 45 s recording.

`tcccd run` with one whisper stage (beam 5, the shipped review: audio checks, word times, twins, number forms,
coverage), requests through tcccd.wire.client. After each set the worker's VmHWM (the kernel's high-water
mark of its resident memory) and VmRSS are read from /proc: the goal is a peak under 450 MB after all of them.
Sets: medical_eval (30 synthetic clips), real (51 real voices), then medical_eval_b's sentences read as one
45 s recording (bench/asr_corpus.py; made on first use). The ONNX graphs are exported before the daemon
starts, so the worker's figures are a cache hit's, as on a kit after its first boot.

    .venv/bin/python bench/asr_stage_memory.py [--rounds 1]    (~3-6 min on 2 shared cores)

Measured on the 2-core machine shared with other sessions (memory does not depend on the load), VmHWM after
each set, MB: at 27ceddd (before the decoder graphs were merged) start 369, medical_eval 395, real 418, 45 s
503 (over the goal); at fb24659 295 / 325 / 347 / 397 (met): one decoder graph instead of two (~80 MB
resident), candidate texts scored after one shared prefix, logits in pieces, the alignment's median filter a
head at a time. At d04a882 (the decoder's graphs on the stage's 2 threads) 338 / 338 / 350 / 418 (met), beside
339 / 339 / 351 / 403 for the same code on one decoder thread in the same hour: +15 MB on the 45 s recording.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import asr_corpus  # noqa: E402
from harness import whisper_daemon  # noqa: E402

OUT = asr_corpus.ROOT / "bench" / "out" / "asr"
GOAL_MB = 450


def memory_mb(pid: int) -> dict[str, float]:
    status = {line.split(":")[0]: int(line.split()[1]) / 1024
              for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith(("VmRSS", "VmHWM"))}
    return {"rss": status["VmRSS"], "hwm": status["VmHWM"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="times each set is sent")
    args = parser.parse_args()
    sets = {"medical_eval": asr_corpus.build_split("medical_eval", OUT), "real": asr_corpus.real_speech(),
            "45 s recording": [asr_corpus.build_long(OUT, split="medical_eval_b")]}
    with whisper_daemon(OUT / "daemon-cache", {"params": {"beam_size": 5}}) as client:
        pid = next(s for s in client.status().stages if s.name == "asr").pid
        print(f"{'after':<24} {'clips':>6} {'s':>7} {'VmRSS MB':>9} {'VmHWM MB':>9}")
        print(f"{'start (warm)':<24} {0:>6} {0:>7} " + "{rss:>9.0f} {hwm:>9.0f}".format(**memory_mb(pid)))
        for name, clips in sets.items():
            t0 = time.perf_counter()
            for _ in range(args.rounds):
                for clip in clips:
                    client.transcribe(clip.path)
            figures = memory_mb(pid)
            print(f"{name:<24} {len(clips) * args.rounds:>6} {time.perf_counter() - t0:>7.1f} "
                  f"{figures['rss']:>9.0f} {figures['hwm']:>9.0f}", flush=True)
        verdict = "met" if figures["hwm"] < GOAL_MB else "NOT met"
        print(f"ASR worker peak {figures['hwm']:.0f} MB (goal < {GOAL_MB}): {verdict}")


if __name__ == "__main__":
    main()
