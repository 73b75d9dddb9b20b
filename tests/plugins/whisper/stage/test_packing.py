"""Packing a file's chunks into 30 s windows, and every time mapped back onto the file's clock."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcccd.plugins.whisper.engine.results import DroppedSpeech, Segment, Transcription
from tcccd.plugins.whisper.review.heard import Written
from tcccd.plugins.whisper.stage.packing import one_per_chunk, pack_windows
from tcccd.plugins.whisper.stage.vad import RATE_HZ, Span


def chunks_at(*seconds: tuple[float, float]) -> list[Span]:
    return [Span(int(a * RATE_HZ), int(b * RATE_HZ)) for a, b in seconds]


def test_chunks_fill_windows_in_order_with_a_pause_between_them():
    audio = np.arange(60 * RATE_HZ, dtype=np.float32)
    chunks = chunks_at((1, 9), (12, 20), (25, 34), (40, 50))  # 8 + 8 + 9 s, then 10 s
    first, second = pack_windows(audio, chunks, window_s=30.0, gap_s=0.5)
    assert [p.file_start for p in first.pieces] == [c.start for c in chunks[:3]]
    assert len(first.audio) == (8 + 8 + 9 + 2 * 0.5) * RATE_HZ and len(second.audio) == 10 * RATE_HZ
    assert first.audio[0] == audio[RATE_HZ] and first.audio[int(8.5 * RATE_HZ)] == audio[12 * RATE_HZ]
    assert not first.audio[8 * RATE_HZ:int(8.5 * RATE_HZ)].any()  # the pause is silence


def test_a_time_inside_a_chunk_moves_with_it_and_one_in_a_pause_sticks_to_the_chunk_before():
    audio = np.zeros(40 * RATE_HZ, np.float32)
    [window] = pack_windows(audio, chunks_at((2, 5), (20, 24)), gap_s=0.5)
    assert window.file_s(0.0) == 2.0 and window.file_s(1.25) == 3.25
    assert window.file_s(3.2) == 5.0  # in the pause
    assert window.file_s(3.5) == 20.0 and window.file_s(5.0) == 21.5 and window.file_s(99.0) == 24.0
    assert window.file_span(2.6, 3.6) == (4.6, 5.0)  # a last word stretched into the pause stays in its phrase
    assert window.file_span(3.3, 3.9) == (20.0, 20.4)


def test_segments_words_and_dropped_speech_land_on_the_files_clock():
    audio = np.zeros(40 * RATE_HZ, np.float32)
    [window] = pack_windows(audio, chunks_at((2, 5), (20, 24)), gap_s=0.5)
    words = [{"text": "TXA", "start_s": 0.5, "end_s": 0.9, "probability": 0.9, "start_char": 0, "end_char": 3},
             {"text": "given", "start_s": 3.6, "end_s": 4.0, "probability": 0.9, "start_char": 4, "end_char": 9}]
    written = Written("TXA given", "TXA given", [], [], words=words)
    segment = Segment(0.0, 4.5, "TXA given", [], -0.2, 0.01, 1.2, 0.0, review=written)
    result = Transcription("TXA given", [segment], 7.5, {}, [DroppedSpeech(3.5, 7.5, "decoding_loop", "x x x")])
    mapped = window.on_file_clock(result)
    [seg] = mapped.segments
    assert (seg.start_s, seg.end_s) == (2.0, 21.0)
    assert [(w["start_s"], w["end_s"]) for w in seg.review.words] == [(2.5, 2.9), (20.1, 20.5)]
    assert [(d.start_s, d.end_s) for d in mapped.dropped] == [(20.0, 24.0)]
    assert segment.start_s == 0.0 and words[0]["start_s"] == 0.5  # the window's result is left as it was


def test_a_chunk_that_starts_on_a_word_gets_the_pause_before_it_and_keeps_its_times():
    audio = np.arange(40 * RATE_HZ, dtype=np.float32)
    [window] = pack_windows(audio, chunks_at((0, 3), (20, 24)), gap_s=0.5, leads=[True, False])
    assert not window.audio[:RATE_HZ // 2].any() and window.audio[RATE_HZ // 2] == audio[0]
    assert len(window.audio) == (3 + 4 + 2 * 0.5) * RATE_HZ  # the lead-in, and the pause between the chunks
    assert window.file_s(0.2) == 0.0 and window.file_s(1.5) == 1.0 and window.file_s(4.5) == 20.5
    [alone] = one_per_chunk(audio, chunks_at((0, 3)), gap_s=0.5, leads=[True])
    assert np.array_equal(alone.audio, window.audio[: int(3.5 * RATE_HZ)])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 29.0), st.floats(0.0, 5.0)), min_size=1, max_size=12))
def test_every_sample_of_speech_is_in_exactly_one_window_once(lengths_and_pauses):
    """Nothing is lost or doubled by packing, and no window is longer than 30 s unless one chunk is."""
    chunks, at = [], RATE_HZ
    for length_s, pause_s in lengths_and_pauses:
        start = at + int(pause_s * RATE_HZ) + 1
        chunks.append(Span(start, start + int(length_s * RATE_HZ)))
        at = chunks[-1].end
    windows = pack_windows(np.zeros(at + RATE_HZ, np.float32), chunks)
    placed = [(p.file_start, p.length) for w in windows for p in w.pieces]
    assert placed == [(c.start, c.end - c.start) for c in chunks]
    for window in windows:
        assert len(window.audio) <= 30 * RATE_HZ or len(window.pieces) == 1
        for piece in window.pieces:
            assert window.file_s(piece.window_start / RATE_HZ) == piece.file_start / RATE_HZ
