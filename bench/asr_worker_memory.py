"""Where the ASR worker's memory goes, step by step, on the 45 s real-speech recording (issue 13, item 4).

Each configuration runs in a fresh child process doing what the whisper stage does, in order: imports, the
silero-vad session, the Transcriber load (cache warm: the ONNX graphs already exported), one ~29 s window
(beam 5), then the whole 45 s recording cut by VAD and decoded with `decode_workers` side by side. After each
step: RSS and PSS (smaps_rollup) now, and VmHWM, the kernel's high-water mark. The last line says whether
torch was imported (the goal: not, on the default onnxruntime path).

    .venv/bin/python bench/asr_worker_memory.py [--workers 1 2] [--backend onnxruntime torch]    (~1-3 min)

The 45 s recording is bench/memory.py's (real clips joined with pauses; made on first use).

Measured 2026-11-23, 2 shared cores (load ~2-4), MiB, RSS / PSS / VmHWM after each step:
  onnxruntime, 2 side by side: imports 53/34/53; vad 96/64/96; load 247/214/266; 29 s window 261/223/296;
                               45 s file 267/228/332. torch never imported.
  onnxruntime, 1 at a time:    load 255/222/273; 29 s window 265/230/302; 45 s file 272/236/307.
  torch backend, 2 side by side (torch encoder + decoder, for comparison): load 511/443/570;
                               29 s window 577/496/577; 45 s file 698/564/700.
Before (onnxruntime encoder + torch decoder; a one-off script doing the same steps): torch import +190 MB RSS,
torch decoder module +150, a 29 s window's activations peaked +220 (VmHWM 731-757), 45 s file with 2 side
by side VmHWM 897-969 MiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / "out" / "memory" / "work" / "cache" / "whisper"  # bench/memory.py's daemon cache


def figures() -> dict[str, int]:
    """RSS, PSS and VmHWM of this process in MiB."""
    status = {line.split(":")[0]: int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
              if line.startswith(("VmRSS:", "VmHWM:"))}
    pss = next(int(line.split()[1]) for line in Path("/proc/self/smaps_rollup").read_text().splitlines()
               if line.startswith("Pss:"))
    return {"rss": status["VmRSS"] // 1024, "pss": pss // 1024, "hwm": status["VmHWM"] // 1024}


def child(backend: str, workers: int, recording: Path) -> None:
    steps = []

    def step(name: str, started: float) -> None:
        steps.append({"step": name, "s": round(time.perf_counter() - started, 2), **figures()})

    t = time.perf_counter()
    import numpy as np
    import soundfile

    from tcccd.plugins.whisper.engine.transcriber import DecodeOptions, Transcriber
    from tcccd.plugins.whisper.stage.vad import SpeechDetector, pack_spans
    step("imports", t)
    t = time.perf_counter()
    detector = SpeechDetector.load()
    step("vad session", t)
    t = time.perf_counter()
    transcriber = Transcriber.load(None, backend=backend, cache_dir=CACHE, threads=2)
    step(f"transcriber load ({transcriber.backend})", t)
    audio, _ = soundfile.read(recording, dtype="float32")
    options = DecodeOptions(beam_size=5)
    t = time.perf_counter()
    window = transcriber.transcribe(audio[: 29 * 16000], options)
    step("one 29 s window, beam 5", t)
    t = time.perf_counter()
    chunks = pack_spans(detector.speech_spans(audio), 30.0, 1.0)
    results = transcriber.transcribe_many([audio[c.start:c.end] for c in chunks], options, workers=workers)
    step(f"45 s file: {len(chunks)} VAD chunks, {workers} side by side", t)
    print(json.dumps({"steps": steps, "torch_imported": "torch" in sys.modules, "window_text": window.text,
                      "texts": [r.text for r in results], "dtype": str(np.float32)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--backend", nargs="+", default=["onnxruntime"])
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    recording = ROOT / "bench" / "out" / "memory" / "real45.wav"
    if args.child:
        child(args.child[0], int(args.child[1]), recording)
        return
    if not recording.exists():
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import memory

        memory.recordings()
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, __file__, "--child", args.backend[0], "1"], check=True,
                   capture_output=True)  # warms the cache: exports happen here, not in a measured run
    for backend in args.backend:
        for workers in args.workers:
            out = subprocess.run([sys.executable, __file__, "--child", backend, str(workers)], check=True,
                                 capture_output=True, text=True)
            report = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"\n== backend {backend}, decode_workers {workers}: torch imported: {report['torch_imported']}")
            print(f"{'step':<44} {'s':>6} {'RSS':>6} {'PSS':>6} {'VmHWM':>6}  (MiB)")
            for s in report["steps"]:
                print(f"{s['step']:<44} {s['s']:>6} {s['rss']:>6} {s['pss']:>6} {s['hwm']:>6}")


if __name__ == "__main__":
    main()
