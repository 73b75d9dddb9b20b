"""Cards for the TAK tests: the card scenarios (tests/data/card) run through the real card stage and projection."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tcccd.card.projection import Projector
from tcccd.tak.cot import Point
from tests.support.card_scenarios import SCENARIOS, CardPipeline, load

POINT = Point(34.0522, -118.2437, 71.0, 4.5, 7.0, "gpsd", "m-g", 0.0)


def projector_of(name: str, tmp_path: Path) -> Projector:
    with CardPipeline(tmp_path) as pipeline:
        pipeline.run(load(SCENARIOS / f"{name}.yaml"))
        return pipeline.projector


@pytest.fixture
def point() -> Point:
    return Point(POINT.lat, POINT.lon, POINT.hae_m, POINT.ce_m, POINT.le_m, "gpsd", "m-g", time.time())


def medevac(xml: bytes) -> tuple[ET.Element, ET.Element, dict[str, dict[str, str]]]:
    """The event, its `_medevac_` and each zMist's attributes by title, from CoT XML as a receiver got it."""
    root = ET.fromstring(xml)
    node = root.find("detail/_medevac_")
    assert node is not None, xml
    return root, node, {z.get("title"): dict(z.attrib) for z in node.findall("zMistsMap/zMist")}
