"""The kit's GNSS through gpsd: its JSON protocol on 127.0.0.1, one TPV report at a time.

`?WATCH={"enable":true,"json":true}` makes gpsd stream reports, one JSON object
a line; a TPV with mode 2 (2D) or 3 (3D) and a latitude and longitude is a fix.
Other report classes (VERSION, DEVICES, SKY, PPS, TOFF...) are skipped, so a
receiver that adds classes never breaks the reader (the asyncio gpsd client on
PyPI, gpsd-client-async, raises on classes it does not model, which is why it
is not used). Circular error: the larger of gpsd's epx/epy (metres, 95%), else
eph; vertical: epv. Height above the ellipsoid: altHAE in a 3D fix only.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from tcccd.tak.cot import Point

WATCH = b'?WATCH={"enable":true,"json":true}\n'
MAX_LINE_BYTES = 64 * 1024


def fix_of(report: dict[str, Any], now: float) -> Point | None:
    """A Point from one TPV report, or None when it holds no fix."""
    if report.get("class") != "TPV" or not isinstance(report.get("mode"), int) or report["mode"] < 2:
        return None
    lat, lon = report.get("lat"), report.get("lon")
    if not isinstance(lat, (int, float)) or not isinstance(lon, (int, float)) or not (
            -90 <= lat <= 90 and -180 <= lon <= 180):
        return None
    errors = [report[k] for k in ("epx", "epy") if isinstance(report.get(k), (int, float))]
    ce = max(errors) if errors else report.get("eph")
    hae = report.get("altHAE") if report["mode"] == 3 else None
    return Point(float(lat), float(lon), _num(hae), _num(ce), _num(report.get("epv")), "gpsd", "m-g", now)


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


async def watch(port: int, on_fix: Callable[[Point], None], on_problem: Callable[[str], None]) -> None:
    """Read gpsd until the connection ends; every fix to `on_fix`, a missing fix or gpsd to `on_problem`."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, limit=MAX_LINE_BYTES), 5.0)
    except (OSError, asyncio.TimeoutError) as exc:
        on_problem(f"no gpsd on 127.0.0.1:{port} ({exc.__class__.__name__}: {exc})")
        return
    try:
        writer.write(WATCH)
        await writer.drain()
        on_problem("gpsd has no fix yet")
        while line := await reader.readline():
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if not isinstance(report, dict) or report.get("class") != "TPV":
                continue
            point = fix_of(report, time.time())
            if point is None:
                on_problem(f"gpsd reports no fix (mode {report.get('mode')})")
            else:
                on_problem("")
                on_fix(point)
        on_problem(f"gpsd on 127.0.0.1:{port} closed the connection")
    finally:
        writer.close()
