"""A CASEVAC request as a Cursor on Target event: what ATAK's CASEVAC tool shows as a 9-line and ZMIST marker.

Type `b-r-f-h-c`; `<detail>` holds `<contact callsign>` (the marker's label),
`<remarks>` and `<_medevac_>` with the 9-line attributes the cards hold (counts
`urgent`, `priority`, `routine`, `litter`, `ambulatory`; `title`;
`medline_remarks`) and a `<zMistsMap>` of `<zMist title z m i s t>`, one per
casualty. An attribute the cards do not hold is absent, never a default (ATAK
shows it blank for the medic to fill). Built with xml.etree, so every value the
medic said is escaped by the serializer, never pasted into markup. `time` and
`start` are when it is sent, `stale` `tak.stale_s` later: restamp() sets them
again when a queued request finally leaves.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timezone

from tcccd.tak.casevac import Casevac

CASEVAC_TYPE = "b-r-f-h-c"
UNKNOWN = 9999999.0  # CoT's value for an unknown height or error


@dataclass(frozen=True)
class Point:
    """Where the marker stands, and how that is known (`how`: m-g from a GNSS fix, h-e entered by hand)."""

    lat: float
    lon: float
    hae_m: float | None
    ce_m: float | None
    le_m: float | None
    source: str  # gpsd, tak device <callsign>, fixed point
    how: str
    ts: float  # when the position was measured (epoch seconds)


def cot_time(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ts * 1000) % 1000:03d}Z"


def _num(value: float | None) -> str:
    return repr(float(UNKNOWN if value is None else value))


def event(request: Casevac, point: Point, now: float, stale_s: float) -> ET.Element:
    root = ET.Element("event", {"version": "2.0", "uid": request.uid, "type": CASEVAC_TYPE, "how": point.how})
    _stamp(root, now, stale_s)
    ET.SubElement(root, "point", {"lat": repr(point.lat), "lon": repr(point.lon), "hae": _num(point.hae_m),
                                  "ce": _num(point.ce_m), "le": _num(point.le_m)})
    detail = ET.SubElement(root, "detail")
    ET.SubElement(detail, "contact", {"callsign": request.title})
    ET.SubElement(detail, "remarks").text = request.remarks()
    medevac = ET.SubElement(detail, "_medevac_", {"title": request.title, "medline_remarks": request.remarks(),
                                                   **{k: str(v) for k, v in request.counts.items()}})
    if request.zmists:
        mists = ET.SubElement(medevac, "zMistsMap")
        for z in request.zmists:
            ET.SubElement(mists, "zMist", {"title": f"ZMIST{z.casualty}", **z.values()})
    return root


def to_xml(request: Casevac, point: Point, now: float, stale_s: float) -> bytes:
    return ET.tostring(event(request, point, now, stale_s), encoding="utf-8", xml_declaration=False)


def restamp(xml: bytes, now: float, stale_s: float) -> bytes:
    """The same event with time/start/stale as of `now`: a request queued while the server was down leaves
    with a fresh stale time, so the map does not drop it on arrival."""
    root = ET.fromstring(xml)
    _stamp(root, now, stale_s)
    return ET.tostring(root, encoding="utf-8", xml_declaration=False)


def _stamp(root: ET.Element, now: float, stale_s: float) -> None:
    root.set("time", cot_time(now))
    root.set("start", cot_time(now))
    root.set("stale", cot_time(now + stale_s))
