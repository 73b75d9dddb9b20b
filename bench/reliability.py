"""Claims of issue 9 (a daemon you can leave running), each measured against a live `tcccd run`.

  fuzz        N random and mutated messages: daemon crashes, owed requests answered once / twice / never
  kills       K SIGKILLs of a worker mid-request: every request answered; time back to ready (p50/p99)
  load        C concurrent clients for S seconds of mixed transcribe (test stage) / speak (Piper) / status:
              throughput, p50/p99 per type, error codes, daemon and worker RSS at start and end, and each
              stage's latency alone vs under the load
  curve       round trip of a 32 kB echo over CurveZMQ beside plain TCP (median, p99)
  contention  SNAC streaming RTF (seeded random weights) alone and beside a process that keeps one core busy,
              with the worker's threads = every core vs the supervisor's default share
Goals: 0 crashes; 0 requests with zero or two finals; only `busy` under load; RSS growth < 5%; CURVE within 2x;
no stage more than 2x slower under load.
Usage: python bench/reliability.py [--part fuzz|kills|load|curve|contention|all] [--fuzz 100000] [--kills 100]
       [--clients 20] [--load-s 300] [--curve-runs 2000] [--contention-runs 3]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness import percentiles, running_daemon

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"  # workers load test stages

from tcccd.core.requests import ENDED_REMEMBERED  # noqa: E402
from tcccd.wire.client import Client, CurveKeys, RequestFailed  # noqa: E402
from tcccd.wire.errors import ErrorReply  # noqa: E402
from tcccd.wire.states import SERVING  # noqa: E402
from tcccd.wire.status import StageStatus, StatusReport  # noqa: E402
from tests.support.fuzz import cases  # noqa: E402
from tests.support.rawclient import RawClient, header  # noqa: E402

SLOW = "tests.support.stage_plugins:Slow"
SPEECH = ["Tourniquet applied at zero nine fifteen.", "Patient breathing, eighteen per minute.",
          "Prepare the needle decompression kit."]


def _stage(report: StatusReport, name: str) -> StageStatus:
    return next(s for s in report.stages if s.name == name)


def bench_fuzz(count: int, workdir: Path) -> None:
    pipeline = [{"name": "echo", "plugin": "passthrough", "max_queue": 256}]
    with running_daemon(workdir, pipeline, {"echo": ["echo"], "stream": ["echo"]},
                        daemon_extra={"stream_idle_timeout_s": 1.0}) as client:
        pid = client.status().pid
        owed, sent, started = set(), 0, time.perf_counter()
        first_seen: dict[str, int] = {}  # each id, numbered in the order ids first came
        reused_after: dict[str, int] = {}  # an owed id sent again later: how many new ids came in between
        with RawClient(client.endpoint) as raw:
            for case in cases(count, seed=int(time.time())):
                for frames in case.frames:
                    raw.send_frames(frames)
                    sent += 1
                if case.request_id in first_seen and not case.owed:
                    reused_after[case.request_id] = len(first_seen) - first_seen[case.request_id]
                elif case.request_id is not None:
                    first_seen.setdefault(case.request_id, len(first_seen))
                owed |= {case.request_id} if case.owed else set()
                if sent % 500 < len(case.frames):
                    raw.collect(quiet_s=0.0)
                if sent >= count:
                    break
            raw.collect(quiet_s=2.0, until=lambda: all(raw.finals(i) for i in owed), timeout_s=600)
        elapsed_s = time.perf_counter() - started
        report = client.status()
    finals = collections.Counter(len(raw.finals(i)) for i in owed)
    doubled = [i for i in raw.replies if len(raw.finals(i)) > 1]
    forgotten = sum(1 for i in doubled if reused_after.get(i, 0) > ENDED_REMEMBERED)
    codes = collections.Counter(ErrorReply.from_data(r["data"]).code for rs in raw.replies.values() for r in rs
                                if r["type"] == "error")
    print(f"fuzz: {sent} messages in {elapsed_s:.1f} s ({sent / elapsed_s:.0f}/s); daemon pid unchanged: "
          f"{report.pid == pid}, worker restarts: {report.stages[0].restarts}, state {report.state}")
    print(f"  owed requests {len(owed)}: answered once {finals[1]}, never {finals[0]}; ids with two or more "
          f"finals: {len(doubled)}, of which {forgotten} were sent again after more than {ENDED_REMEMBERED} new ids "
          f"(the daemon remembers that many ended ids; past them a reused id is a new request); counters "
          f"{report.counters.to_data()}")
    print(f"  error codes: {dict(codes.most_common())}")


def _outcome(finals: list[dict[str, Any]]) -> str:
    """A request's end as the raw frames show it: its error code, `ok`, or how many finals it got."""
    if len(finals) != 1:
        return f"{len(finals)} finals"
    return ErrorReply.from_data(finals[0]["data"]).code if finals[0]["type"] == "error" else "ok"


def bench_kills(kills: int, workdir: Path) -> None:
    pipeline = [{"name": "slow", "plugin": SLOW, "restart": {"max_restarts": 1000, "window_s": 0.5,
                                                             "backoff_initial_s": 0.05}}]
    with running_daemon(workdir, pipeline, {"echo": ["slow"]}) as client:
        back_s, outcomes = [], collections.Counter()
        for n in range(kills):
            pid = _stage(client.status(), "slow").pid
            with RawClient(client.endpoint) as raw:
                raw.send(header("echo", f"k{n}", final=True, data={"delay_s": 2.0}))
                time.sleep(0.2)
                os.kill(pid, signal.SIGKILL)
                killed_at = time.perf_counter()
                raw.collect(quiet_s=0.3, until=lambda n=n: raw.finals(f"k{n}"), timeout_s=30)
                finals = raw.finals(f"k{n}")
                outcomes[_outcome(finals)] += 1
            while (stage := _stage(client.status(), "slow")).pid == pid or stage.state not in SERVING:
                time.sleep(0.01)
            back_s.append(time.perf_counter() - killed_at)
    p50, p99 = percentiles(back_s)
    print(f"kills: {kills} SIGKILLs mid-request: outcomes {dict(outcomes)}; back to ready p50 {p50 * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms")


def _timed(fn: Any) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        fn()
        code = "ok"
    except RequestFailed as exc:
        code = exc.code
    except TimeoutError:
        code = "timeout"
    return (time.perf_counter() - started) * 1000, code


def _operations(client: Client) -> dict[str, Any]:
    return {"transcribe": lambda: client.transcribe(b"\0\1" * 16000, _pcm()),
            "speak": lambda: list(client.speak(random.choice(SPEECH), deadline_s=60)),
            "status": client.status}


def _pcm() -> Any:
    from tcccd.wire.protocol import AudioFormat

    return AudioFormat("pcm_s16le", 16000, 1)


def _load_client(endpoint: str, until: float, results: list[tuple[str, float, str]]) -> None:
    with Client(endpoint, timeout_s=60) as client:
        ops = _operations(client)
        while time.monotonic() < until:
            kind = random.choices(list(ops), weights=(4, 2, 1))[0]
            ms, code = _timed(ops[kind])
            results.append((kind, ms, code))


def _alone(client: Client, runs: int) -> dict[str, float]:
    ops = _operations(client)
    return {kind: percentiles([_timed(op)[0] for _ in range(runs)])[0] for kind, op in ops.items()}


def bench_load(clients: int, seconds: float, workdir: Path) -> None:
    pipeline = [{"name": "asr", "plugin": SLOW, "params": {"delay_s": 0.0}, "max_queue": 64},
                {"name": "piper", "plugin": "piper", "max_queue": 64}]
    with running_daemon(workdir, pipeline, {"transcribe": ["asr"], "speak": ["piper"]}) as client:
        alone = _alone(client, 10)
        start = client.status()
        results: list[tuple[str, float, str]] = []
        until = time.monotonic() + seconds
        threads = [threading.Thread(target=_load_client, args=(client.endpoint, until, results))
                   for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        end = client.status()
    print(f"load: {clients} clients x {seconds:.0f} s: {len(results)} requests, {len(results) / seconds:.1f}/s; "
          f"codes {dict(collections.Counter(code for _, _, code in results))}")
    for kind in ("transcribe", "speak", "status"):
        ms = [m for k, m, code in results if k == kind and code == "ok"]
        if ms:
            p50, p99 = percentiles(ms)
            print(f"  {kind:<10} n={len(ms):<6} p50 {p50:8.1f} ms  p99 {p99:8.1f} ms  alone p50 {alone[kind]:7.1f} ms"
                  f"  loaded/alone {p50 / alone[kind]:.1f}x")
    for name in ("asr", "piper"):
        alone_ms, loaded_ms = _stage(start, name).latency.p50_ms, _stage(end, name).latency.p50_ms
        print(f"  {name} stage's own processing p50 (last 512 messages): alone {alone_ms} ms, under load "
              f"{loaded_ms} ms ({loaded_ms / alone_ms:.1f}x; end-to-end times above include queueing)")
        a, b = _stage(start, name).rss_bytes, _stage(end, name).rss_bytes
        print(f"  {name} worker RSS {a / 2**20:.1f} -> {b / 2**20:.1f} MiB ({(b - a) / a * 100:+.1f}%)")
    a, b = start.memory.daemon_rss_bytes, end.memory.daemon_rss_bytes
    print(f"  daemon RSS {a / 2**20:.1f} -> {b / 2**20:.1f} MiB ({(b - a) / a * 100:+.1f}%); "
          f"counters {end.counters.to_data()}")


def bench_curve(runs: int, workdir: Path) -> None:
    from tcccd.system.security import generate

    keys = generate(workdir / "keys")
    payload = os.urandom(32 * 1024)
    rows = {}
    for label, extra, curve in (
            ("plain tcp", {}, None),
            ("curve", {"curve_secret_key_file": str(keys["server_secret"]),
                       "curve_authorized_dir": str(keys["authorized_dir"])},
             CurveKeys.from_files(keys["client_secret"], keys["server_public"]))):
        os.environ.pop("TCCCD_CURVE_CLIENT_KEY", None)
        if curve is not None:  # wait_until_healthy's client takes its keys from the environment
            os.environ["TCCCD_CURVE_CLIENT_KEY"] = str(keys["client_secret"])
            os.environ["TCCCD_CURVE_SERVER_KEY"] = str(keys["server_public"])
        (workdir / label.replace(" ", "_")).mkdir()
        with running_daemon(workdir / label.replace(" ", "_"), [{"name": "echo", "plugin": "passthrough"}],
                            {"echo": ["echo"]}, daemon_extra=extra) as client:
            samples = [_timed(lambda: client.call("echo", payload=payload))[0] for _ in range(runs)]
        rows[label] = percentiles(samples[10:])
    for label, (p50, p99) in rows.items():
        print(f"curve: {label:<9} 32 kB echo round trip p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    print(f"  curve/plain p50 {rows['curve'][0] / rows['plain tcp'][0]:.2f}x")


def _snac_rtf(client: Client, frames: int) -> float:
    import numpy as np

    codes = np.random.default_rng(frames).integers(1, 4096, frames * 7)
    tokens = (codes + 10 + (np.arange(frames * 7) % 7) * 4096).tolist()
    started = time.perf_counter()
    samples = sum(len(m.payload or b"") // 2 for m in client.speak_tokens(
        [tokens[i:i + 7] for i in range(0, len(tokens), 7)], deadline_s=120))
    return (time.perf_counter() - started) / (samples / 24000)


def bench_contention(runs: int, workdir: Path) -> None:
    from tts import _save_random_snac

    weights = _save_random_snac(Path(tempfile.mkdtemp(dir=workdir)))
    cores = len(os.sched_getaffinity(0))
    for threads in (cores, None):
        stage = {"name": "snac", "plugin": "snac", "params": {"weights_dir": str(weights), "noise": False},
                 "threads": threads}
        (workdir / f"t{threads}").mkdir()
        with running_daemon(workdir / f"t{threads}", [stage, {"name": "piper", "plugin": "piper"}],
                            {"speak.tokens": ["snac"], "speak": ["piper"]}) as client:
            _snac_rtf(client, 16)
            alone = [_snac_rtf(client, 84) for _ in range(runs)]
            burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                busy = [_snac_rtf(client, 84) for _ in range(runs)]
            finally:
                burner.kill()
        label = f"threads={threads}" if threads else f"threads=default ({max(1, cores // 2)} of {cores})"
        print(f"contention: SNAC streaming RTF {label}: alone {min(alone):.2f} (median {percentiles(alone)[0]:.2f}), "
              f"one core busy {min(busy):.2f} (median {percentiles(busy)[0]:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", default="all", choices=["fuzz", "kills", "load", "curve", "contention", "all"])
    parser.add_argument("--fuzz", type=int, default=100_000)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--load-s", type=float, default=300.0)
    parser.add_argument("--curve-runs", type=int, default=2000)
    parser.add_argument("--contention-runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        parts = {"fuzz": lambda: bench_fuzz(args.fuzz, workdir / "fuzz"),
                 "kills": lambda: bench_kills(args.kills, workdir / "kills"),
                 "load": lambda: bench_load(args.clients, args.load_s, workdir / "load"),
                 "curve": lambda: bench_curve(args.curve_runs, workdir / "curve"),
                 "contention": lambda: bench_contention(args.contention_runs, workdir / "contention")}
        for name, run in parts.items():
            if args.part in (name, "all"):
                (workdir / name).mkdir()
                run()


if __name__ == "__main__":
    main()
