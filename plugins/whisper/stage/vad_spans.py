"""silero-vad's hysteresis: per-window speech probabilities to speech spans, without importing silero_vad.

A port of `silero_vad.utils_vad.get_speech_timestamps_from_probs` (silero-vad 6.2, MIT licence) for 16 kHz,
with its defaults for cutting at the maximum length (the longest pause inside the span). The package's module
imports torch at the top, about 190 MB of the ASR worker's memory for a loop over floats.
tests/plugins/whisper/stage/test_vad.py checks that both give the same spans.
"""

from __future__ import annotations

from collections.abc import Sequence

RATE_HZ = 16000
WINDOW_SAMPLES = 512
MIN_SILENCE_AT_MAX_SPEECH_MS = 98


def speech_spans_from_probs(probs: Sequence[float], *, threshold: float, neg_threshold: float,
                            min_speech_ms: int, max_speech_s: float, min_silence_ms: int, speech_pad_ms: int,
                            audio_length_samples: int) -> list[tuple[int, int]]:
    """(start, end) sample pairs of speech, padded by speech_pad_ms, as silero computes them."""
    min_speech = RATE_HZ * min_speech_ms / 1000
    pad = RATE_HZ * speech_pad_ms / 1000
    max_speech = RATE_HZ * max_speech_s - WINDOW_SAMPLES - 2 * pad
    min_silence = RATE_HZ * min_silence_ms / 1000
    min_silence_at_max = RATE_HZ * MIN_SILENCE_AT_MAX_SPEECH_MS / 1000
    triggered = False
    spans: list[dict[str, int]] = []
    current: dict[str, int] = {}
    temp_end = prev_end = next_start = 0
    possible_ends: list[tuple[int, int]] = []
    for i, prob in enumerate(probs):
        sample = WINDOW_SAMPLES * i
        if prob >= threshold and temp_end:
            if sample - temp_end > min_silence_at_max:
                possible_ends.append((temp_end, sample - temp_end))
            temp_end = 0
            if next_start < prev_end:
                next_start = sample
        if prob >= threshold and not triggered:
            triggered = True
            current["start"] = sample
            continue
        if triggered and sample - current["start"] > max_speech:
            if possible_ends:  # cut at the longest pause inside the span
                prev_end, duration = max(possible_ends, key=lambda end: end[1])
                current["end"] = prev_end
                spans.append(current)
                current = {}
                next_start = prev_end + duration
                if next_start < prev_end + sample:
                    current["start"] = next_start
                else:
                    triggered = False
                prev_end = next_start = temp_end = 0
                possible_ends = []
            else:
                current["end"] = sample
                spans.append(current)
                current = {}
                prev_end = next_start = temp_end = 0
                triggered = False
                possible_ends = []
                continue
        if prob < neg_threshold and triggered:
            if not temp_end:
                temp_end = sample
            if sample - temp_end < min_silence:
                continue
            current["end"] = temp_end
            if current["end"] - current["start"] > min_speech:
                spans.append(current)
            current = {}
            prev_end = next_start = temp_end = 0
            triggered = False
            possible_ends = []
    if current and audio_length_samples - current["start"] > min_speech:
        current["end"] = audio_length_samples
        spans.append(current)
    return _padded(spans, pad, audio_length_samples)


def _padded(spans: list[dict[str, int]], pad: float, length: int) -> list[tuple[int, int]]:
    """silero's padding: speech_pad_ms on each side, or half the pause between two spans closer than two pads."""
    for i, span in enumerate(spans):
        if i == 0:
            span["start"] = int(max(0, span["start"] - pad))
        if i != len(spans) - 1:
            silence = spans[i + 1]["start"] - span["end"]
            if silence < 2 * pad:
                span["end"] += int(silence // 2)
                spans[i + 1]["start"] = int(max(0, spans[i + 1]["start"] - silence // 2))
            else:
                span["end"] = int(min(length, span["end"] + pad))
                spans[i + 1]["start"] = int(max(0, spans[i + 1]["start"] - pad))
        else:
            span["end"] = int(min(length, span["end"] + pad))
    return [(span["start"], span["end"]) for span in spans]
