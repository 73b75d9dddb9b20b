"""`tcccd mute`, `tcccd unmute` and `tcccd transcripts`: the microphone and the record, from a shell.

The medic mutes while talking to the casualty or on the radio; the record is
read back (or handed over) with `tcccd transcripts`, straight from the journal
the daemon writes before it publishes anything.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from collections.abc import Callable
from typing import Any

from tcccd.wire.client import Client
from tcccd.wire.replies import CaptureReply
from tcccd.wire.status import CaptureHealth, StatusReport


def since_ts(text: str) -> float:
    """A time to read from: epoch seconds, an ISO time (2026-11-23T14:05), or an age such as 30m, 2h, 1d."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    try:
        if text[-1:] in units and text[:-1].replace(".", "", 1).isdigit():
            return time.time() - float(text[:-1]) * units[text[-1]]
        if text.replace(".", "", 1).isdigit():
            return float(text)
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected epoch seconds, an ISO time (2026-11-23T14:05) or an "
                                         f"age (90s, 30m, 2h, 1d)") from None


def _set_mute(endpoint: str, muted: bool) -> int:
    with Client(endpoint, timeout_s=10) as client:
        reply = CaptureReply.from_message(client.call("capture.mute" if muted else "capture.unmute"))
    print(f"microphone {reply.capture}")
    return 0


def _transcripts(endpoint: str, args: argparse.Namespace) -> int:
    with Client(endpoint, timeout_s=10) as client:
        entries = client.transcripts_since(since_ts=args.since or 0.0)
    if args.json:
        print(json.dumps([entry.to_data() for entry in entries], indent=2))
        return 0
    for entry in entries:
        stamp = dt.datetime.fromtimestamp(entry.ts).strftime("%Y-%m-%d %H:%M:%S")
        print(f"{stamp}  {entry.source:<6} {entry.text}")
    return 0


def register(sub: Any, command: Callable[..., argparse.ArgumentParser], endpoint: Callable[[Any], str]) -> None:
    command("mute", "stop listening to the microphone (what was said before is still transcribed)",
            lambda args: _set_mute(endpoint(args), True))
    command("unmute", "listen to the microphone again", lambda args: _set_mute(endpoint(args), False))
    t = command("transcripts", "the transcript journal: every final transcript, oldest first",
                lambda args: _transcripts(endpoint(args), args))
    t.add_argument("--since", type=since_ts, metavar="TIME", help="epoch seconds, ISO time, or an age (30m, 2h)")
    t.add_argument("--json", action="store_true")


def status_lines(report: StatusReport) -> list[str]:
    """The microphone and the record on `tcccd status`'s screen: what a medic checks before going out."""
    lines = []
    for stage in report.stages:
        if stage.plugin_health.plugin != "capture":
            continue
        health = CaptureHealth.from_data(stage.plugin_health.to_data(), f"stages[{stage.name}].plugin_health")
        if health.capture is None:
            lines.append(f"capture   {stage.name}: state unknown ({health.health_error or 'no report yet'})")
            continue
        if health.capture == "no_device":
            lines.append(f"capture   {stage.name}: NO DEVICE ({health.no_device_reason}); retrying")
            continue
        clipping = "CLIPPING" if health.clipping else "no clipping"
        lines.append(f"capture   {stage.name}: {health.capture} on {health.device_name} at {health.device_rate_hz} Hz "
                     f"({health.rate_source}), level {health.input_level_dbfs} dBFS, {clipping}, overruns "
                     f"{health.overruns}, reopens {health.reopens}, echo {health.echo}"
                     + (", NO SPEAKER (read-back off)" if health.speaker is False else ""))
        if health.degraded_reason:
            lines.append(f"capture   {stage.name}: DEGRADED: {health.degraded_reason}")
    journal = report.transcripts
    if journal:
        if journal.last_error:
            lines.append(f"journal   FAILING: {journal.last_error}")
        else:
            lines.append(f"journal   {journal.appends} transcripts recorded since start ({journal.path})")
    return lines
