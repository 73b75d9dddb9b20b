"""Telemetry-driven profiles: how fast a battery cap reaches every worker, how many switches, what a switch costs.

Part 1, the policy on the shipped traces (tests/data/telemetry) and on a noise sweep: switches made against the
fewest the signal needs (each trace's noise-free signal crosses each threshold once per direction).
Part 2, a running tcccd (whisper + piper, the shipped profiles) on a fake UPS host root: the battery's capacity
file is rewritten 80 -> 35 -> 15 -> 90 while a client keeps transcribing and speaking. For every step: time from
the rewrite (the threshold crossing; for the lift, crossing + dwell_s) to the switcher's `profile` event, which it
sends once every worker has confirmed; the switch's own cost (decision event -> applied); requests that failed.

    .venv/bin/python bench/profiles.py [--policy-only]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

from harness import running_daemon

from tcccd.telemetry.replay import Sample, read_trace, replay
from tcccd.telemetry.settings import TelemetrySettings
from tcccd.wire.client import Client, RequestFailed
from tcccd.wire.replies import ProfileDecision, ProfileReply, read_reply

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "tests" / "data" / "telemetry"
SPEECH = Path(__file__).resolve().parents[1] / "tests" / "data" / "real-speech" / "s003.wav"
CACHE = REPO / "bench" / "out" / "profiles-cache"
# Each shipped trace's noise-free signal (tests/data/telemetry/make_traces.py) and the switches it needs.
MINIMUM = {"discharge.csv": 2,        # through 40% and 20%, never back
           "thermal_spike.csv": 4,    # up through 75 and 85 C, down through 80 and 70 C
           "oscillating.csv": 2,      # settles on 40% (one step down), then charges to 50% (one step up)
           "sensor_lost.csv": 2}      # 78 C caps; the sensor returns at 60 C: one lift
DWELL_S = 5.0


def policy_on_traces() -> None:
    settings = TelemetrySettings()
    print("trace               switches  minimum")
    for name, minimum in MINIMUM.items():
        decisions = replay(read_trace(TRACES / name), settings, "emergency")
        print(f"{name:<19} {len(decisions):>8} {minimum:>8}")


def noisy_plateau(level: float, noise: float, reading: str, rng: random.Random) -> list[Sample]:
    """The signal walks onto a threshold, sits there for 30 min with uniform noise, then moves 15 away (1 s steps)."""
    sign = 1.0 if reading == "battery_percent" else -1.0
    samples = []
    for t in range(0, 2100):
        base = level + sign * 5 if t < 60 else level if t < 1860 else level + sign * min(15.0, (t - 1860) / 10)
        value = base + (rng.uniform(-noise, noise) if 60 <= t < 1860 else 0.0)
        samples.append(Sample(float(t), {"battery_percent": None, "hottest_c": None, reading: value}))
    return samples


def noise_sweep() -> None:
    rng = random.Random(7)
    settings = TelemetrySettings()
    print("\nnoise sweep: 30 min on the threshold, then away (minimum 2 switches: down once, up once)")
    print("reading           noise  switches  (margin only, dwell 0 s)  (no margin, no dwell)")
    margin_only = TelemetrySettings(dwell_s=0)
    bare = TelemetrySettings(dwell_s=0, battery_margin_percent=0, thermal_margin_c=0)
    for reading, level, unit in (("battery_percent", 40.0, "%"), ("hottest_c", 75.0, " C")):
        for noise in (1.0, 2.0, 3.0, 4.0, 5.0, 8.0):
            samples = noisy_plateau(level, noise, reading, rng)
            counts = [len(replay(samples, s, "emergency")) for s in (settings, margin_only, bare)]
            print(f"{reading:<17} +-{noise:g}{unit:<3} {counts[0]:>8} {counts[1]:>24} {counts[2]:>22}")


def set_capacity(root: Path, percent: int) -> float:
    path = root / "sys/class/power_supply/ups-battery/capacity"
    path.with_suffix(".new").write_text(f"{percent}\n")
    path.with_suffix(".new").replace(path)
    return time.time()


class Load:
    """A client that keeps transcribing a real recording and speaking a sentence; counts what fails."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.done = threading.Event()
        self.ok = 0
        self.failed: list[str] = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        with Client(self.endpoint, timeout_s=120) as client:
            while not self.done.is_set():
                try:
                    client.transcribe(SPEECH, deadline_s=60)
                    list(client.speak("Tourniquet applied at fourteen twenty.", deadline_s=60))
                    self.ok += 2
                except (RequestFailed, TimeoutError) as exc:
                    self.failed.append(str(exc))


def wait_applied(events, name: str, timeout_s: float = 60.0) -> tuple[float, float | None]:
    """(time the switch to `name` was applied in every worker, time of the decision that asked for it)."""
    decided_at = None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        event = events.next(max(0.0, deadline - time.monotonic()))
        if event is None:
            break
        message = event[1]
        said = read_reply(message)
        if isinstance(said, ProfileDecision) and said.name == name:
            decided_at = message.ts
        elif isinstance(said, ProfileReply) and said.name == name:
            return message.ts, decided_at
    raise TimeoutError(f"profile {name} not applied within {timeout_s} s")


def live(workdir: Path) -> None:
    root = workdir / "host"
    shutil.copytree(TRACES / "with-ups", root)
    set_capacity(root, 80)
    CACHE.mkdir(parents=True, exist_ok=True)
    pipeline = [{"name": "asr", "plugin": "whisper", "start_timeout_s": 600}, {"name": "piper", "plugin": "piper"}]
    extra = {"host_root": str(root), "cache_dir": str(CACHE),
             "telemetry": {"backend": "sysfs", "dwell_s": DWELL_S}}
    with running_daemon(workdir, pipeline, {"transcribe": ["asr"], "speak": ["piper"]}, 900, extra,
                        profile="emergency") as client:
        endpoint = client.endpoint
        events = client.subscribe(["profile"])
        time.sleep(0.5)
        load = Load(endpoint)
        load.thread.start()
        time.sleep(3.0)
        print("\nlive: whisper + piper, a client transcribing and speaking throughout")
        print("step          profile    crossing->applied s  decision->applied s")
        for percent, name, wait_s in ((35, "field", 0.0), (15, "training", 0.0), (90, "emergency", DWELL_S)):
            crossed_at = set_capacity(root, percent) + wait_s
            applied_at, decided_at = wait_applied(events, name)
            cost = f"{applied_at - decided_at:.2f}" if decided_at else "-"
            print(f"battery {percent:>3}%  {name:<10} {applied_at - crossed_at:>19.2f} {cost:>20}")
            time.sleep(3.0)
        load.done.set()
        load.thread.join(120)
        print(f"requests: {load.ok} answered, {len(load.failed)} failed" +
              (f" (first: {load.failed[0][:120]})" if load.failed else ""))
        events.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy-only", action="store_true", help="skip the running daemon (part 2)")
    args = parser.parse_args()
    policy_on_traces()
    noise_sweep()
    if not args.policy_only:
        with tempfile.TemporaryDirectory() as workdir:
            live(Path(workdir))


if __name__ == "__main__":
    main()
