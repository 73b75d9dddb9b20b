"""The card stage under test, started once for the card's unit tests (the same Stage the worker runs)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tcccd.kit.testing import PluginHarness
from tests.support.card_scenarios import CARD_PLUGIN


@pytest.fixture(scope="session")
def card_stage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PluginHarness]:
    with PluginHarness(CARD_PLUGIN, {}, tmp_path_factory.mktemp("card-stage")) as harness:
        yield harness
