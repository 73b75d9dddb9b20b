"""Read-only: the medic's own TAK device's position reports, picked from what the TAK feed carries.

A position report is an atom event (`a-...`) whose uid is the configured
`device_uid` or whose `<contact callsign>` is the configured `callsign`; its
`<point>` places the CASEVAC marker when gpsd has no fix. Everything else on the
feed is ignored: nothing the TAK network says changes a casualty card. CoT XML
only (what a TAK server streams to a client that did not ask for protobuf).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from datetime import datetime

from tcccd.tak.cot import UNKNOWN, Point


def _float(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value < UNKNOWN else None


def _when(text: str | None, now: float) -> float:
    try:
        return datetime.fromisoformat((text or "").replace("Z", "+00:00")).timestamp()
    except ValueError:
        return now


def device_point(data: bytes, callsign: str | None, device_uid: str | None, now: float) -> Point | None:
    """The device's position in one CoT event, or None when the event is not its position report."""
    if not (callsign or device_uid):
        return None
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    if root.tag != "event" or not root.get("type", "").startswith("a-"):
        return None
    contact = root.find("detail/contact")
    said = contact.get("callsign") if contact is not None else None
    if not ((device_uid and root.get("uid") == device_uid) or (callsign and said == callsign)):
        return None
    point = root.find("point")
    if point is None:
        return None
    lat, lon = _float(point.get("lat")), _float(point.get("lon"))
    if lat is None or lon is None or not (-90 <= lat <= 90 and -180 <= lon <= 180) or (lat, lon) == (0.0, 0.0):
        return None
    return Point(lat, lon, _float(point.get("hae")), _float(point.get("ce")), _float(point.get("le")),
                 f"TAK device {said or root.get('uid')}", root.get("how") or "m-g", _when(root.get("time"), now))
