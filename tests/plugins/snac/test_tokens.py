"""Orpheus token parsing and the vectorised code layout, checked against a plain per-element loop."""

from __future__ import annotations

import numpy as np
import pytest

from tcccd.kit.plugin import PluginError
from tcccd.plugins.snac.tokens import CodeStream, TokenTextParser, audio_token_ids, tokens_to_codebooks


def _loop_layout(token_numbers: list[int]) -> tuple[list[int], list[int], list[int]]:
    """The layout as the issue states it, one element at a time: the oracle."""
    codes = [n - 10 - (i % 7) * 4096 for i, n in enumerate(token_numbers)]
    cb0: list[int] = []
    cb1: list[int] = []
    cb2: list[int] = []
    for f in range(len(codes) // 7):
        frame = codes[7 * f: 7 * f + 7]
        cb0.append(frame[0])
        cb1 += [frame[1], frame[4]]
        cb2 += [frame[2], frame[3], frame[5], frame[6]]
    return cb0, cb1, cb2


def random_tokens(frames: int, seed: int = 0) -> list[int]:
    codes = np.random.default_rng(seed).integers(0, 4096, frames * 7)
    return (codes + 10 + (np.arange(frames * 7) % 7) * 4096).tolist()


@pytest.mark.parametrize("frames", [1, 4, 7, 28, 200])
def test_vectorised_layout_equals_the_loop(frames: int) -> None:
    tokens = random_tokens(frames, seed=frames)
    expected = _loop_layout(tokens)
    got = tokens_to_codebooks(tokens)
    assert [g.shape for g in got] == [(1, frames), (1, 2 * frames), (1, 4 * frames)]
    for g, e in zip(got, expected, strict=True):
        assert g.reshape(-1).tolist() == e


def test_incomplete_last_frame_is_left_out() -> None:
    tokens = random_tokens(3)[:-2]
    assert tokens_to_codebooks(tokens)[0].shape == (1, 2)


def test_code_stream_matches_whole_layout_when_fed_in_odd_pieces() -> None:
    tokens = random_tokens(9, seed=3)
    stream = CodeStream(initial_frames=1)
    for start in range(0, len(tokens), 5):
        stream.extend(np.array(tokens[start: start + 5]))
    assert stream.frames == 9
    for got, expected in zip(stream.codebooks(2, 7), tokens_to_codebooks(tokens[14:49]), strict=True):
        assert np.array_equal(got, expected)


@pytest.mark.parametrize("position, bad_token", [(0, 9 + 4096 + 1), (3, 10 + 3 * 4096 - 1), (6, 10 + 7 * 4096)])
def test_out_of_range_code_names_the_token_and_the_accepted_range(position: int, bad_token: int) -> None:
    tokens = random_tokens(2)
    tokens[position] = bad_token
    with pytest.raises(PluginError) as err:
        tokens_to_codebooks(tokens)
    assert err.value.code == "bad_tokens"
    low = 10 + position * 4096
    assert f"token {bad_token} at stream position {position}" in str(err.value)
    assert f"{low}..{low + 4095}" in str(err.value)


def test_text_tokens_split_anywhere_parse_the_same() -> None:
    numbers = [10, 4106, 28000, 4, 99999]
    text = "".join(f"<custom_token_{n}>" for n in numbers) + " trailing words"
    for cut in range(1, len(text)):
        parser = TokenTextParser()
        assert parser.feed(text[:cut]) + parser.feed(text[cut:]) == numbers


def test_text_between_tokens_is_ignored_and_control_markers_dropped() -> None:
    parser = TokenTextParser()
    numbers = parser.feed("<|audio|>tara: hi<custom_token_1><custom_token_12> <custom_token_x><custom_token_4107>")
    assert numbers == [1, 12, 4107]
    assert audio_token_ids(numbers).tolist() == [12, 4107]
