"""The scenario scripts (tests/data/card) run as text through the card stage, the card log and the projection,
and compared with their expected cards field by field.

Tuning scenarios must give exactly the expected card; held-out ones must never give a field that is not in
theirs (nothing invented), and what they miss is reported by bench/card.py, not asserted here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcccd.card.projection import project
from tests.support.card_fields import expected_fields, fields
from tests.support.card_scenarios import CardPipeline, Scenario, scenarios

ALL = scenarios()


def test_there_are_the_five_required_scenarios_and_held_out_ones() -> None:
    names = {s.name for s in ALL if s.set == "tune"}
    assert {"gsw_limb_tourniquet_txa", "blast_two_casualties", "tension_pneumothorax", "burn_fluids",
            "negations_corrections"} <= names
    assert any(s.set == "heldout" for s in ALL)


@pytest.mark.parametrize("scenario", ALL, ids=[s.name for s in ALL])
def test_scenario_card_field_by_field(scenario: Scenario, tmp_path: Path) -> None:
    with CardPipeline(tmp_path) as pipeline:
        pipeline.run(scenario)
        got, expected = fields(pipeline.projector.cards()), expected_fields(scenario.expected)
        invented, missed = sorted(got - expected), sorted(expected - got)
        assert invented == [], f"fields nobody said: {invented}"
        if scenario.set == "tune":
            assert missed == [], f"fields said but not on the card: {missed}"
        rebuilt = project(pipeline.log.events(), pipeline.log.reviews())
        assert rebuilt == pipeline.projector.cards()
