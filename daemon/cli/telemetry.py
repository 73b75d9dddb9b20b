"""`tcccd telemetry [--json] [--watch]` and `tcccd telemetry replay TRACE.csv`.

Both run without the daemon: readings come straight from the host root (the same readers the
daemon uses), and a replay only needs the config's thresholds.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcccd.telemetry.jtop_backend import open_reader
from tcccd.telemetry.nvpmodel import current_mode, load_modes
from tcccd.telemetry.readings import host_root
from tcccd.telemetry.render import render_readings
from tcccd.telemetry.replay import TraceError, format_decision, read_trace, replay
from tcccd.wire.replies import ProfileReply


def register(sub: Any, command: Callable[..., argparse.ArgumentParser], load_config: Callable[[Any], Any]) -> None:
    """Add the telemetry commands to the `tcccd` parser; `load_config(args)` gives the Config."""
    def cmd_telemetry(args: argparse.Namespace) -> int:
        return show(load_config(args), args.json, args.watch)

    def cmd_replay(args: argparse.Namespace) -> int:
        return replay_trace(load_config(args), args.trace, args.requested, args.json)

    t = command("telemetry", "battery, power draw, temperatures and power mode, read on this box", cmd_telemetry)
    t.add_argument("--json", action="store_true")
    t.add_argument("--watch", type=float, nargs="?", const=1.0, default=None, metavar="SECONDS")
    tools = t.add_subparsers(dest="telemetry_command")
    r = command("replay", "drive the profile policy from a recorded trace (CSV) and print its decisions",
                cmd_replay, tools)
    r.add_argument("trace", type=Path, help="CSV: t_s, battery_percent and/or hottest_c; empty cell = missing")
    r.add_argument("--requested", help="the profile asked for (default: the config's profile)")
    r.add_argument("--json", action="store_true", help="one JSON object per decision")


def duration_s(text: str) -> float:
    """`--for 30m`: a duration such as 90s, 30m, 2h or 1h30m (argparse type)."""
    parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?", text.strip())
    if not text.strip() or parts is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration: use e.g. 90s, 30m, 2h or 1h30m")
    hours, minutes, seconds = (float(p) if p else 0.0 for p in parts.groups())
    total_s = hours * 3600 + minutes * 60 + seconds
    if total_s <= 0:
        raise argparse.ArgumentTypeError("the duration must be longer than zero")
    return total_s


def describe_profile(info: ProfileReply) -> str:
    """One line for `tcccd profile`: what runs, why, and what was asked for."""
    line = f"{info.name} ({info.reason})"
    if info.requested and info.requested != info.name:
        line += f"; requested {info.requested}"
    if info.override_until:
        line += f"; override until {time.strftime('%H:%M:%S', time.localtime(info.override_until))}"
    return line + f"; available: {', '.join(info.available)}"


def show(config: Any, as_json: bool, watch_s: float | None) -> int:
    root = host_root(config.daemon.host_root)
    reader = open_reader(root, config.daemon.telemetry.backend)
    while True:
        readings = reader.read()
        modes = load_modes(root)
        running = current_mode(root, modes) if modes else None
        mode = running.name if running else None
        if as_json:
            print(json.dumps({**readings.to_dict(), "power_mode": mode}), flush=True)
        else:
            if watch_s:
                print("\033[2J\033[H", end="")
            print(render_readings(readings, mode), flush=True)
        if not watch_s:
            return 0
        time.sleep(watch_s)


def replay_trace(config: Any, trace: Path, requested: str | None, as_json: bool) -> int:
    try:
        samples = read_trace(trace)
    except TraceError as exc:
        print(f"tcccd telemetry replay: {exc}", file=sys.stderr)
        return 2
    decisions = replay(samples, config.daemon.telemetry, requested or config.profile)
    for decision in decisions:
        print(json.dumps(decision.to_dict()) if as_json else format_decision(decision))
    if not as_json:
        span_s = samples[-1].t_s - samples[0].t_s if samples else 0.0
        print(f"{len(decisions)} decision(s) over {len(samples)} samples ({span_s:g} s)")
    return 0
