"""Live capture: end of speech to final transcript, capture CPU on silence, journal append with fsync.

    python bench/capture.py [--utterances N] [--silence-s S] [--appends N]

1. End of speech to final transcript: a daemon with the capture stage (default
   device = a private PulseAudio null sink, so the microphone hears at
   real-time pace) and the whisper stage; each utterance is played into the
   sink and a subscriber on the events socket timestamps its `transcript`
   (source mic). End of speech = when paplay returns (it drains the stream)
   minus the trailing silence of the file. Beside it: `transcribe` decode time
   of the same files through the same daemon.
2. Capture CPU on silence: the capture worker's CPU time (psutil, its pid from
   status) over S seconds of silence, as % of one core.
3. Journal append p50/p99 (SQLite WAL, synchronous=FULL: each includes fsync).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import soundfile as sf
import zmq
from harness import percentiles, running_daemon, timed_ms

from tcccd.plugins.capture.virtual_mic import running_pulse
from tcccd.record.journal import Entry, JournalSettings, TranscriptJournal
from tcccd.wire.protocol import Message
from tcccd.wire.replies import Transcript

SPEECH = Path(__file__).resolve().parents[1] / "tests" / "data" / "real-speech"


def trailing_silence_s(path: Path, threshold: float = 0.01) -> float:
    audio, rate = sf.read(path, dtype="float32", always_2d=True)
    loud = np.flatnonzero(np.abs(audio.mean(axis=1)) > threshold)
    return (len(audio) - (loud[-1] + 1 if len(loud) else 0)) / rate


def journal_append_ms(appends: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        journal = TranscriptJournal.open(Path(tmp), JournalSettings())
        segments = [{"start_s": 0.0, "end_s": 2.1, "text": "tourniquet applied left thigh", "avg_logprob": -0.2}]
        samples = timed_ms(lambda: journal.append(Entry(time.time(), "mic", "field", "r", "tourniquet applied left "
                                                        "thigh", 0.8, segments)), appends, warmup=5)
        journal.close()
    return percentiles(samples)


def subscriber(endpoint: str) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.SUB)
    sock.setsockopt(zmq.SUBSCRIBE, b"transcript")
    sock.setsockopt(zmq.RCVTIMEO, 100)
    sock.connect(endpoint)
    return sock


def final_mic_transcripts(sock: zmq.Socket, first_s: float = 15.0, quiet_s: float = 2.5) -> list[tuple[float, str]]:
    """(arrival time, text) of the final mic transcripts of one played file: until none came for quiet_s."""
    got: list[tuple[float, str]] = []
    deadline = time.monotonic() + first_s
    while time.monotonic() < deadline:
        try:
            frames = sock.recv_multipart()
        except zmq.Again:
            continue
        heard = Transcript.from_message(Message.from_frames(frames[1:]))
        if heard.source == "mic" and not heard.partial and heard.text:
            got.append((time.monotonic(), heard.text))
            deadline = time.monotonic() + quiet_s
    return got


def capture_pid(client) -> int:
    return next(s.pid for s in client.status().stages if s.plugin == "capture")


def live_latency(files: list[Path], silence_s: float, partial_ms: int, block_ms: int,
                 profile: str) -> dict[str, object]:
    with running_pulse() as pulse, tempfile.TemporaryDirectory() as tmp:
        os.environ["PULSE_SERVER"] = pulse.server
        pipeline = [{"name": "mic", "plugin": "capture", "params": {"latency_ms": 200, "block_ms": block_ms}},
                    {"name": "asr", "plugin": "whisper", "max_queue": 512, "start_timeout_s": 600,
                     "params": {"partial_interval_ms": partial_ms}}]
        routes = {"transcribe": ["asr"], "stream": ["asr"]}
        with running_daemon(Path(tmp), pipeline, routes, profile=profile) as client:
            events = subscriber(client.status().endpoints.events)
            proc = psutil.Process(capture_pid(client))
            time.sleep(2.0)
            cpu0, t0 = proc.cpu_times(), time.monotonic()
            time.sleep(silence_s)
            cpu1, wall = proc.cpu_times(), time.monotonic() - t0
            silence_cpu = 100 * ((cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)) / wall
            lags, decodes, texts = [], [], []
            for path in files:
                player = pulse.play_file(path)
                player.wait()
                speech_end = time.monotonic() - trailing_silence_s(path)
                got = final_mic_transcripts(events)
                if got:
                    lags.append(got[-1][0] - speech_end)
                    texts.append(" ".join(text for _, text in got))
                start = time.perf_counter()
                client.transcribe(str(path))
                decodes.append(time.perf_counter() - start)
                time.sleep(1.0)
    return {"silence_cpu_pct": silence_cpu, "lags_s": lags, "decodes_s": decodes, "texts": texts}


def p50_p95(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{np.percentile(values, 50):.3f} / {np.percentile(values, 95):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=12)
    parser.add_argument("--silence-s", type=float, default=20.0)
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--block-ms", type=int, default=20, help="capture block (10-32 ms)")
    parser.add_argument("--partial-ms", type=int, default=500, help="whisper partial_interval_ms (each partial is a "
                        "decode of the utterance so far: on 2 CPU cores it delays the final)")
    parser.add_argument("--profile", default="field", help="the profile the daemon runs (beam, fallback ladder)")
    args = parser.parse_args()
    p50, p99 = journal_append_ms(args.appends)
    print(f"journal append (WAL, synchronous=FULL, fsync each): p50 {p50:.2f} ms, p99 {p99:.2f} ms "
          f"({args.appends} appends)")
    files = sorted(SPEECH.glob("s0*.wav"))[: args.utterances]
    result = live_latency(files, args.silence_s, args.partial_ms, args.block_ms, args.profile)
    print(f"(profile {args.profile}, whisper partial_interval_ms={args.partial_ms}, capture block_ms={args.block_ms},"
          f" load {os.getloadavg()[0]:.1f})")
    print(f"capture worker CPU on {args.silence_s:g} s of silence: {result['silence_cpu_pct']:.2f}% of one core")
    print(f"end of speech -> final mic transcript, p50 / p95 s: {p50_p95(result['lags_s'])} "
          f"({len(result['lags_s'])}/{len(files)} utterances heard)")
    print(f"transcribe decode of the same files, p50 / p95 s: {p50_p95(result['decodes_s'])}")


if __name__ == "__main__":
    main()
