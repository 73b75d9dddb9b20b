"""Which stretches of VAD speech no kept word covers, and what becomes of them."""

from __future__ import annotations

from tcccd.plugins.whisper.review.coverage import NOT_TRANSCRIBED, covered_by, recover, uncovered


def segment(start_s, end_s, words):
    return {"start_s": start_s, "end_s": end_s, "words": [{"start_s": a, "end_s": b} for a, b in words]}


def test_speech_between_kept_words_is_found_and_short_pauses_are_not():
    kept = [segment(0.0, 9.0, [(0.5, 1.0), (1.1, 1.6), (6.0, 6.5), (6.6, 7.0)])]
    covered = covered_by(kept, [], margin_s=0.3)
    assert uncovered([(0.3, 7.3)], covered, min_s=0.7) == [(1.9, 5.7)]  # the phrase between them
    assert uncovered([(0.3, 1.8), (5.8, 7.3)], covered, min_s=0.7) == []


def test_reported_drops_and_segments_without_word_times_count_as_covered():
    covered = covered_by([{"start_s": 2.0, "end_s": 4.0, "words": []}], [{"start_s": 5.0, "end_s": 8.0}], 0.3)
    assert uncovered([(1.0, 9.0)], covered, min_s=0.8) == [(8.0, 9.0)]  # 1.0-1.7 and 4.3-5.0 are short


def test_a_gap_that_decodes_again_joins_the_record_and_one_that_does_not_is_reported():
    segments = [segment(0.0, 1.0, [(0.2, 0.8)])]
    dropped: list[dict] = []
    found = segment(3.0, 4.0, [(3.1, 3.5), (3.6, 3.9)])
    neighbour = segment(0.0, 1.0, [(0.2, 0.8)])  # decoded again with the gap's margin: not the lost speech

    def redo(start_s, end_s):
        return [neighbour, found] if start_s < 4 else []

    reported = recover([(2.8, 4.2), (6.0, 7.5)], redo, segments, dropped)
    assert segments == [segment(0.0, 1.0, [(0.2, 0.8)]), found]
    assert dropped == [{"start_s": 6.0, "end_s": 7.5, "reason": NOT_TRANSCRIBED}] and reported == [(6.0, 7.5)]


def test_speech_before_the_first_kept_word_counts_from_a_shorter_stretch():
    """'it applied' for 'Tourniquet applied': the lost word is at the start of what was said, with no kept word
    before it to leave a long gap."""
    covered = covered_by([segment(0.5, 2.0, [(0.9, 1.1), (1.2, 1.6)])], [], margin_s=0.3)
    assert uncovered([(0.0, 2.0)], covered, min_s=0.7) == []
    assert uncovered([(0.0, 2.0)], covered, min_s=0.7, min_head_s=0.3) == [(0.0, 0.6)]
    assert uncovered([(0.4, 2.0)], covered, min_s=0.7, min_head_s=0.3) == []  # VAD's own pad before the word
    mid = covered_by([segment(0.0, 4.0, [(0.2, 0.6), (1.4, 1.8)])], [], margin_s=0.3)
    assert uncovered([(0.0, 2.0)], mid, min_s=0.7, min_head_s=0.3) == []  # 0.2 s between words is a pause
