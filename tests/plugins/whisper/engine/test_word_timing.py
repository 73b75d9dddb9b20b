"""Word timing's pieces against their definitions: openai's DTW loop, a plain median, openai's word split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcccd.plugins.whisper.engine.word_timing import dtw, median_filter, split_words


def openai_dtw(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """openai-whisper's dtw_cpu, loop for loop (timing.py), as the reference."""
    n, m = x.shape
    cost = np.ones((n + 1, m + 1)) * np.inf
    trace = -np.ones((n + 1, m + 1))
    cost[0, 0] = 0
    for j in range(1, m + 1):
        for i in range(1, n + 1):
            c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
            if c0 < c1 and c0 < c2:
                c, t = c0, 0
            elif c1 < c0 and c1 < c2:
                c, t = c1, 1
            else:
                c, t = c2, 2
            cost[i, j] = x[i - 1, j - 1] + c
            trace[i, j] = t
    i, j = trace.shape[0] - 1, trace.shape[1] - 1
    trace[0, :] = 2
    trace[:, 0] = 1
    path = []
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        if trace[i, j] == 0:
            i, j = i - 1, j - 1
        elif trace[i, j] == 1:
            i -= 1
        else:
            j -= 1
    path = np.array(path[::-1])
    return path[:, 0], path[:, 1]


def least_cost(x: np.ndarray) -> float:
    """The cost of the cheapest monotonic path from the first cell to the last (plain dynamic programming)."""
    n, m = x.shape
    cost = np.full((n + 1, m + 1), np.inf)
    cost[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i, j] = x[i - 1, j - 1] + min(cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1])
    return cost[n, m]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.integers(1, 40), st.integers(0, 2**31))
def test_dtw_finds_openais_path(tokens, frames, seed):
    x = np.random.default_rng(seed).normal(size=(tokens, frames))  # no ties: one cheapest path
    ours, theirs = dtw(x), openai_dtw(x)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8), st.integers(1, 40), st.integers(0, 2**31))
def test_dtw_path_is_monotonic_and_least_cost_even_with_ties(tokens, frames, seed):
    """Rounded costs make ties, where openai's loop (a tie above goes left, whatever left costs) and any other
    order of sums may part ways; the path is still one of least cost, step by step from the first cell."""
    x = np.random.default_rng(seed).normal(size=(tokens, frames)).round(3)
    rows, cols = dtw(x)
    steps = np.diff(np.stack([rows, cols]), axis=1)
    assert (rows[0], cols[0], rows[-1], cols[-1]) == (0, 0, tokens - 1, frames - 1)
    assert {tuple(s) for s in steps.T} <= {(1, 1), (1, 0), (0, 1)}
    assert x[rows, cols].sum() == pytest.approx(least_cost(x), abs=1e-9)


def test_median_filter_is_a_reflect_padded_running_median():
    x = np.random.default_rng(1).normal(size=(3, 20))
    padded = np.pad(x, [(0, 0), (3, 3)], mode="reflect")
    expected = np.array([[np.median(row[j:j + 7]) for j in range(20)] for row in padded])
    np.testing.assert_allclose(median_filter(x), expected)


@pytest.mark.parametrize(("pieces", "words"), [
    ([" Turn", "iqu", "et", " applied", "."], [(0, 3), (3, 4), (4, 5)]),
    ([" at", " 09", ":", "15", ""], [(0, 1), (1, 2), (2, 4), (4, 5)]),  # openai too: " 09", ":15"
    (["Hello", " world", ""], [(0, 1), (1, 2), (2, 3)]),
])
def test_words_start_at_a_space_or_punctuation(pieces, words):
    assert split_words(pieces) == words
