"""The suite's hypothesis profile: the same examples on every run, so a result never depends on the draw."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci",
                                reason="another profile was asked for (HYPOTHESIS_PROFILE)")


def drawn_examples() -> list[str]:
    seen: list[str] = []

    @settings(max_examples=25)  # a test's own settings keep the profile's derandomize
    @given(st.text(min_size=1))
    def record(text: str) -> None:
        seen.append(text)

    record()
    return seen


def test_the_ci_profile_is_loaded_by_default() -> None:
    assert settings.default.derandomize is True
    assert settings.default.database is None  # nothing an earlier run found changes what this run tries


def test_two_runs_draw_the_same_examples() -> None:
    first, second = drawn_examples(), drawn_examples()
    assert len(first) > 5 and first == second
