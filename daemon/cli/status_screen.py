"""`tcccd status`'s screen: the one page an operator reads to decide whether the box is fit.

The exit codes follow the LSB convention for `status` so scripts and systemd
tooling can use them: 0 healthy, 1 running but degraded (or still starting),
3 not running, 4 unknown.
"""

from __future__ import annotations

import datetime as dt

from tcccd.cli.capture import status_lines as capture_lines
from tcccd.telemetry.render import status_lines
from tcccd.wire.status import MemoryStatus, StatusReport

EXIT_HEALTHY, EXIT_DEGRADED, EXIT_NOT_RUNNING, EXIT_UNKNOWN = 0, 1, 3, 4


def exit_code(report: StatusReport) -> int:
    return EXIT_HEALTHY if report.state == "healthy" else EXIT_DEGRADED


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _mb(value: int | None) -> str:
    return "-" if not value else f"{value / 2**20:.0f}"


def _ago(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%H:%M:%S")


def _budget_text(mem: MemoryStatus) -> str:
    """The memory capper's view: budget, headroom, and what it last did."""
    if not mem.budget_bytes:
        return ""
    text = f"; budget {_mb(mem.budget_bytes)} MB, headroom {(mem.headroom_bytes or 0) / 2**20:.0f} MB"
    if mem.refusing:
        text += ", REFUSING new work"
    last = mem.last_action
    return text + (f"; last: {last.action} {' '.join(last.targets)} at {_ago(last.ts)}" if last else "")


def card_lines(report: StatusReport) -> list[str]:
    """Where the casualty card stands, and what waits for the medic's review."""
    card = report.card
    if not card.enabled:
        return ["card      off (no card stage routed)"]
    text = (f"card      mission {card.mission}, casualty {card.casualty} current; {len(card.casualties)} card(s), "
            f"{card.events} events, "
            f"{card.unconfirmed} unconfirmed")
    if card.waiting or card.skipped:
        text += f"; {card.waiting} transcript(s) waiting, {card.skipped} skipped"
    text += f"; read-backs {card.readbacks}"
    if card.readback_errors:
        text += f" ({card.readback_errors} failed: {card.readback_last_error})"
    lines = [text]
    if card.clock_ahead_min is not None and card.clock_ahead_at is not None:
        hours, minutes = divmod(card.clock_ahead_min, 60)
        lines.append(f"CLOCK     at {_ago(card.clock_ahead_at)} the medic said {card.clock_said_hhmm} for an act "
                     f"done, {hours} h {minutes:02d} min ahead of the kit's {card.clock_read_hhmm}: check the kit's "
                     "clock and time zone")
    tak = report.tak
    if tak is None or not tak.enabled:
        return lines
    where = f"marker at {tak.position_source}" if tak.position_source else (tak.position_problem or "")
    waiting = f"; {tak.awaiting_confirmation}" if tak.awaiting_confirmation else ""
    return [*lines, f"{tak.line}; {tak.sent} sent; {where}{waiting}"]


def render(report: StatusReport) -> str:
    """The one screen an operator reads to decide whether the box is fit."""
    prof, mem = report.profile, report.memory
    lines = [
        f"tcccd {report.version}  {report.state.upper()}  (pid {report.pid}, up {report.uptime_s:.0f} s)",
        f"profile   {prof.name}  ({prof.reason}, since {_ago(prof.since)})",
        *status_lines(prof, report.telemetry, report.power_mode),
        f"memory    {_mb(mem.total_rss_bytes)} MB total (daemon {_mb(mem.daemon_rss_bytes)} MB)" + _budget_text(mem),
        f"requests  {report.requests_in_flight} in flight",
        *capture_lines(report),
        *card_lines(report),
        "",
        f"{'STAGE':<10} {'PLUGIN':<12} {'STATE':<11} {'RESTARTS':>8} {'QUEUE':>7} {'DROPPED':>7} "
        f"{'P50 ms':>8} {'P99 ms':>8} {'RSS MB':>7}  LAST ERROR",
    ]
    for s in report.stages:
        queue = f"{s.queue_depth}/{s.max_queue}"
        lines.append(
            f"{s.name:<10} {s.plugin:<12} {s.state.value:<11} {s.restarts:>8} {queue:>7} "
            f"{s.dropped_audio_chunks:>7} {_ms(s.latency.p50_ms):>8} {_ms(s.latency.p99_ms):>8} "
            f"{_mb(s.rss_bytes):>7}  {(s.last_error or '')[:60]}"
        )
    if report.last_errors:
        lines += ["", "recent errors:"]
        lines += [f"  {_ago(e.ts)}  {e.message[:110]}" for e in report.last_errors[-5:]]
    return "\n".join(lines)
