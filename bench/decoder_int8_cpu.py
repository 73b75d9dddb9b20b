"""The claim in profiles/training.yaml: Whisper's int8 CPU decoder costs less CPU time (energy) than FP32.

Each setting runs in its own process (one thread, greedy, no fallback) over the first 29 real-speech clips;
CPU seconds (user + system) stand in for energy on a CPU-only path. Wall time is noisy on a shared machine.

    .venv/bin/python bench/decoder_int8_cpu.py            # both settings, one process each
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

SPEECH = Path(__file__).resolve().parents[1] / "tests" / "data" / "real-speech"
CACHE = Path(__file__).resolve().parent / "out" / "decoder-int8-cache"
RATE_HZ = 16000


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load_clips() -> list[np.ndarray]:
    clips = []
    for path in sorted(SPEECH.glob("s0[0-2]*.wav")):
        audio, rate_hz = sf.read(path, dtype="float32")
        audio = audio.mean(axis=1) if audio.ndim > 1 else audio
        clips.append(soxr.resample(audio, rate_hz, RATE_HZ).astype(np.float32))
    return clips


def child(decoder_int8: bool) -> None:
    from tcccd.plugins.whisper.engine.decoding import DecodeOptions
    from tcccd.plugins.whisper.engine.transcriber import Transcriber

    clips = load_clips()
    transcriber = Transcriber.load(None, cache_dir=CACHE, threads=1, decoder_int8=decoder_int8)
    options = DecodeOptions(beam_size=1, temperatures=(0.0,))
    transcriber.transcribe(clips[0], options)  # warm-up
    started_cpu_s, started_s = cpu_s(), time.perf_counter()
    for clip in clips:
        transcriber.transcribe(clip, options)
    audio_s = sum(len(c) for c in clips) / RATE_HZ
    print(f"decoder_int8={decoder_int8!s:<5}  clips={len(clips)}  audio={audio_s:.1f} s  "
          f"cpu={cpu_s() - started_cpu_s:.2f} s  wall={time.perf_counter() - started_s:.2f} s", flush=True)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2] == "int8")
        return
    for setting in ("int8", "fp32"):
        subprocess.run([sys.executable, __file__, "--child", setting], check=True)


if __name__ == "__main__":
    main()
