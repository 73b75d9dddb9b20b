"""What one 30 s window of audio becomes: text, silence, or speech dropped because the decoder looped.

On real voices tiny.en loops readily: "twenty" came out as "20. 20. 20. ..."
twenty-one times, and most of those loops came from encoding only the audio
plus a margin (the truncated context) instead of the 30 s window the model was
trained on. A medical record must never hold words nobody said, so this module
is the one place that decides, in order:

1. temperature fallback, as openai does, choosing among failed attempts the
   loop-free, most confident one;
2. with a truncated context, a result that is rejected, loops, or ends well
   before the audio does is decoded again with the full window (so the shorter
   context can only ever save time, never words);
3. a result that still loops is never emitted: the window is dropped and
   reported as such, so the caller can count it and raise an alert.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from tcccd.plugins.whisper.engine.decoding import SECONDS_PER_TIMESTAMP, DecodeOptions, WindowResult
from tcccd.plugins.whisper.engine.mel import HOP_LENGTH, N_FRAMES, SAMPLE_RATE_HZ
from tcccd.plugins.whisper.engine.repetition import has_word

AUDIO_CONTEXT_MARGIN_FRAMES = 100  # 1 s of the padding's silence after the audio: the model sees speech end
FRAMES_PER_POSITION = 2  # the encoder's second convolution halves the frame rate
# A truncated-context decode whose last timestamp is this far before the end of the audio may have lost words
# (the plugin's chunks end 0.2 s after VAD's end of speech): it is decoded again with the full window.
EARLY_END_S = 1.0


Attempt = WindowResult | None


@dataclass(frozen=True)
class WindowOutcome:
    """The decision for one window: `result` to keep, or `loop` when its speech could only be transcribed as a
    loop and must be dropped, or neither when it is silence (or babble under the confidence floor)."""

    result: WindowResult
    kept: bool
    loop: bool
    full_window_retry: bool
    heard: str = ""  # for a loop: what the looping attempt wrote (the audit log's, never the record's)
    audio: Any = None  # what the engine prepared for the kept attempt (cross keys/values): rewrites are checked on it


def is_rejected(result: WindowResult, options: DecodeOptions) -> bool:
    """No speech here, or babble under the confidence floor: nothing of this window is kept."""
    return is_silence(result, options) or result.avg_logprob < options.min_avg_logprob


def is_silence(result: WindowResult, options: DecodeOptions) -> bool:
    """openai's no-speech rule plus the hard ceiling: a silent window needs no fallback."""
    if result.no_speech_prob > options.no_speech_hard_threshold:
        return True
    return result.no_speech_prob > options.no_speech_threshold and result.avg_logprob < options.logprob_threshold


def needs_fallback(result: WindowResult, options: DecodeOptions) -> bool:
    if is_silence(result, options):
        return False
    too_repetitive = result.compression_ratio > options.compression_ratio_threshold or result.repetitive
    return too_repetitive or result.avg_logprob < options.logprob_threshold


def context_frames(segment_frames: int, audio_context: str) -> int:
    """Mel frames the encoder sees: the whole 30 s window, or the audio plus a margin."""
    if audio_context == "full":
        return N_FRAMES
    frames = min(N_FRAMES, segment_frames + AUDIO_CONTEXT_MARGIN_FRAMES)
    return frames + frames % FRAMES_PER_POSITION


def last_timestamp_index(segment_frames: int, audio_context: str) -> int:
    """Truncated context: the end of the audio; full window: openai's rules, the window's end."""
    if audio_context == "full":
        return N_FRAMES // FRAMES_PER_POSITION
    return -(-segment_frames // FRAMES_PER_POSITION)


def ends_early(result: WindowResult, segment_frames: int, timestamp_begin: int) -> bool:
    """The last timestamp falls well before the end of this window's audio (only checked on the last window)."""
    stamps = [t for t in result.tokens if t >= timestamp_begin]
    if not stamps or segment_frames >= N_FRAMES:
        return False
    audio_s = segment_frames * HOP_LENGTH / SAMPLE_RATE_HZ
    return audio_s - (stamps[-1] - timestamp_begin) * SECONDS_PER_TIMESTAMP > EARLY_END_S


class WindowDecoder:
    """Runs the decisions above over an engine (`prepare(mel)`, `decode(prepared, options, temperature, ...)`)."""

    def __init__(self, engine: Any, timestamp_begin: int) -> None:
        self.engine = engine
        self.timestamp_begin = timestamp_begin

    def decode(self, mel: Any, seek: int, segment_frames: int, options: DecodeOptions, prompt: list[int],
               suppress: tuple[int, ...], timings: dict[str, float]) -> WindowOutcome:
        result, looping, audio = self._with_fallback(mel, seek, segment_frames, options, prompt, suppress, timings)
        retried = options.audio_context != "full" and self._suspect(result, segment_frames, options)
        if retried:
            full = replace(options, audio_context="full")
            result, looping, audio = self._with_fallback(mel, seek, segment_frames, full, prompt, suppress, timings)
        silent = is_silence(result, options)
        # Speech the decoder wrote only as a loop, its loop-free attempts holding no word (".") or only babble, is
        # speech lost: reported as dropped, not passed off as an empty window.
        lost = looping is not None and (not has_word(result.text) or is_rejected(result, options))
        loop = not silent and (result.repetitive or lost)
        kept = not (loop or is_rejected(result, options))
        heard = (looping or result).text.strip()[:200] if loop else ""
        return WindowOutcome(result, kept=kept, loop=loop, full_window_retry=retried, heard=heard,
                             audio=audio if kept else None)

    def _suspect(self, result: WindowResult, segment_frames: int, options: DecodeOptions) -> bool:
        return (result.repetitive or is_rejected(result, options)
                or ends_early(result, segment_frames, self.timestamp_begin))

    def _with_fallback(self, mel: Any, seek: int, segment_frames: int, options: DecodeOptions, prompt: list[int],
                       suppress: tuple[int, ...], timings: dict[str, float]) -> tuple[WindowResult, Attempt, Any]:
        """The attempt to keep, the first attempt that looped (if one did), and the prepared audio."""
        started = time.perf_counter()
        window = mel[:, seek: seek + context_frames(segment_frames, options.audio_context)]
        prepared = self.engine.prepare(window[None])  # the mel holds 30 s of padding past the audio
        timings["encode_ms"] += (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        max_timestamp = last_timestamp_index(segment_frames, options.audio_context)
        attempts = []
        for temperature in options.temperatures:
            result = self.engine.decode(prepared, options, temperature, prompt, suppress, max_timestamp)
            if not needs_fallback(result, options):
                break
            attempts.append(result)
        else:
            # openai keeps the last (hottest) attempt; a loop-free, most confident one invents less.
            result = max(attempts, key=lambda r: (not r.repetitive, r.avg_logprob))
        timings["decode_ms"] += (time.perf_counter() - started) * 1000
        return result, next((a for a in attempts if a.repetitive), None), prepared
