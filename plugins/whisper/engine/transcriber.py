"""The Whisper engine the service side calls: audio in, segments with confidence signals out.

It runs openai-whisper's seek loop (30 s windows, timestamps moving the seek,
temperature fallback, the no-speech skip) over our own model, and encodes a
short utterance with a truncated audio context by default: only the mel frames
that hold audio plus a margin, the big saving for 3-6 s commands.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from tcccd.kit.plugin import PluginError
from tcccd.plugins.whisper.engine.backend_loader import Fallback
from tcccd.plugins.whisper.engine.decoding import (
    SECONDS_PER_TIMESTAMP,
    DecodeOptions,
    LogitsProcessor,
    WindowResult,
)
from tcccd.plugins.whisper.engine.forced import WindowAudio, WindowEvidence, can_force
from tcccd.plugins.whisper.engine.mel import HOP_LENGTH, N_FRAMES, SAMPLE_RATE_HZ, log_mel_spectrogram
from tcccd.plugins.whisper.engine.results import DroppedSpeech, Segment, Transcription, dropped_window
from tcccd.plugins.whisper.engine.tokenizer import Tokenizer
from tcccd.plugins.whisper.engine.window_policy import EARLY_END_S, FRAMES_PER_POSITION, WindowDecoder

__all__ = ["DecodeOptions", "DroppedSpeech", "LogitsProcessor", "Segment", "Transcriber", "Transcription"]

# The decoder's per-token ops are tiny: with 2 torch threads on a loaded 2-core machine (load 6-8) a 3.4 s
# utterance took 1.97 s greedy / 9.6 s beam 5, with 1 thread 0.27 s / 0.62 s (same run). The decoder runs on
# one thread (torch's, or the ONNX decoder sessions' own); the encoder backends get `threads`.
DECODER_THREADS = 1


def _check_audio(audio: np.ndarray) -> np.ndarray:
    audio = np.asarray(audio)
    if audio.ndim != 1:
        raise PluginError(f"audio has shape {audio.shape}; expected mono float32 samples at 16 kHz (1-D)",
                          code="bad_audio")
    if not np.issubdtype(audio.dtype, np.floating):
        raise PluginError(f"audio has dtype {audio.dtype}; expected float32 samples in [-1, 1] at 16 kHz",
                          code="bad_audio")
    if not np.isfinite(audio).all():
        raise PluginError("audio holds NaN or infinite samples", code="bad_audio")
    return audio.astype(np.float32, copy=False)


def _is_digital_silence(window: Any) -> bool:
    """Every frame at the spectrogram's floor: the window holds no signal."""
    return bool(window.size == 0 or window.max() == window.min())


def _check_options(options: DecodeOptions, backend: str) -> None:
    if options.audio_context not in ("auto", "full"):
        raise PluginError(f"audio_context {options.audio_context!r}; accepted: 'auto', 'full'", code="bad_request")
    if options.beam_size < 1 or not options.temperatures:
        raise PluginError("beam_size must be >= 1 and temperatures non-empty", code="bad_request")
    if backend == "ctranslate2" and options.logits_processors:
        raise PluginError("the ctranslate2 backend cannot run logits_processors (vocabulary biasing); "
                          "use backend 'onnxruntime' or 'torch'", code="bad_request")


def _share_one_malloc_arena() -> None:
    """glibc gives each new thread its own heap, and each heap keeps its freed blocks: with one shared heap the
    45 s file's peak fell from 647 to 604 MB at the same speed (the decoder's steps allocate little)."""
    import contextlib
    import ctypes

    m_arena_max = -8  # glibc malloc.h
    with contextlib.suppress(OSError, AttributeError):  # not glibc: its allocator has its own policy
        ctypes.CDLL("libc.so.6").mallopt(m_arena_max, 1)


class Transcriber:
    """One loaded model. `transcribe` keeps no state between calls, so calls may run on several threads
    (transcribe_many does); loading and swapping models is the caller's to serialise."""

    def __init__(self, tokenizer: Tokenizer, engine: Any, model: Any, n_text_ctx: int,
                 suppress: tuple[int, ...], backend: str) -> None:
        self.tokenizer = tokenizer
        self.engine = engine
        self.model = model  # the torch Whisper, None on the ctranslate2 backend
        self.n_text_ctx = n_text_ctx
        self.suppress = suppress
        self.backend = backend  # the one in use: a fallback when the configured one could not load
        self.fallbacks: list[Any] = []  # backend_loader.Fallback: what was skipped and why
        self.n_mels = 80

    @classmethod
    def load(cls, model: str | Path | None, *, backend: str = "onnxruntime", device: str = "cpu",
             cache_dir: Path, threads: int, decoder_int8: bool = True, fallback_backends: tuple[str, ...] = (),
             precision: Any = None, log: Any = None) -> Transcriber:
        """Load weights, tokenizer and backend; every failure is a PluginError that says what is accepted.

        decoder_int8 (CPU only): int8 decoder Linears and output projection, ~8x faster per token (see quantize.py).
        fallback_backends: tried in order when `backend` cannot run here (backend_loader.py); with any, a missing
        CUDA device moves the decoder to cpu (without, it is an error). What was skipped, and why, is in
        `transcriber.fallbacks`.
        precision: the GPU paths' accel.Precision (the profile's); None = the 'field' profile's.
        The default (onnxruntime first, cpu, decoder_int8) runs encoder and decoder on ONNX Runtime and never
        imports torch once their graphs are cached (backend_loader.onnx_engine); where that cannot load, the
        torch decoder does (listed in `fallbacks`).
        """
        from tcccd.kit.accel import precision_for
        from tcccd.plugins.whisper.engine.backend_loader import BackendLoader, backend_chain, onnx_engine, usable_device
        from tcccd.plugins.whisper.engine.convert import ModelSourceError, read_model_source
        from tcccd.plugins.whisper.engine.encoders import BackendUnavailable

        try:
            chain = backend_chain(backend, fallback_backends)
        except ValueError as error:
            raise PluginError(str(error), code="bad_config") from None
        if device not in ("cpu", "cuda"):
            raise PluginError(f"unknown device {device!r}; accepted: 'cpu', 'cuda'", code="bad_config")
        try:
            source = read_model_source(model)
            tokenizer = Tokenizer(source.tokenizer_json, multilingual=source.dims["n_vocab"] >= 51865)
        except (ModelSourceError, ValueError) as error:
            raise PluginError(str(error), code="bad_model") from None
        suppress = source.suppress_ids or tokenizer.symbol_tokens()
        fallbacks = []
        if chain[0] == "onnxruntime" and device == "cpu" and decoder_int8:
            try:  # the default: encoder and decoder on ONNX Runtime, and torch never imported
                engine = onnx_engine(source, model, tokenizer, Path(cache_dir), threads)
            except (BackendUnavailable, ImportError) as error:
                fallbacks.append(Fallback("onnxruntime decoder", f"{error}; the torch decoder runs instead"))
            else:
                transcriber = cls(tokenizer, engine, None, source.dims["n_text_ctx"], suppress, "onnxruntime")
                transcriber.n_mels = source.dims["n_mels"]
                return transcriber
        import torch

        device, moved = usable_device(device)
        if moved and len(chain) == 1:
            raise PluginError("device 'cuda' is configured but torch sees no CUDA device; use device 'cpu', or "
                              "list fallback_backends to run on the cpu instead", code="bad_config")
        fallbacks += [moved] if moved else []
        torch.set_num_threads(DECODER_THREADS)
        loader = BackendLoader(source, lambda: read_model_source(model), tokenizer, device=device,
                               cache_dir=Path(cache_dir), threads=threads, decoder_int8=decoder_int8,
                               precision=precision or precision_for("field"), log=log)
        try:
            used, engine, whisper, skipped = loader.first_available(chain)
        except BackendUnavailable as error:
            raise PluginError(str(error), code="bad_config") from None
        transcriber = cls(tokenizer, engine, whisper, source.dims["n_text_ctx"], suppress, used)
        transcriber.n_mels = source.dims["n_mels"]
        transcriber.fallbacks = fallbacks + skipped
        return transcriber

    def transcribe(self, audio: np.ndarray, options: DecodeOptions) -> Transcription:
        audio = _check_audio(audio)
        _check_options(options, self.backend)
        timings = {"mel_ms": 0.0, "encode_ms": 0.0, "decode_ms": 0.0}
        started = time.perf_counter()
        mel = log_mel_spectrogram(audio, self.n_mels)
        content_frames = mel.shape[-1] - N_FRAMES
        timings["mel_ms"] = (time.perf_counter() - started) * 1000
        prompt = self.tokenizer.encode(" " + options.prompt.strip()) if options.prompt else []
        history: list[int] = []
        segments: list[Segment] = []
        transcription = Transcription("", segments, len(audio) / SAMPLE_RATE_HZ, {})
        windows = WindowDecoder(self.engine, self.tokenizer.timestamp_begin)
        seek = 0
        while seek < content_frames:
            segment_frames = min(N_FRAMES, content_frames - seek)
            if options.check is not None:
                options.check()
            if _is_digital_silence(mel[:, seek: seek + segment_frames]):
                seek += segment_frames  # no signal at all: nothing to transcribe, and tiny.en would say "you"
                continue
            outcome = windows.decode(mel, seek, segment_frames, options, prompt + history, self._suppressed(options),
                                     timings)
            transcription.full_window_retries += outcome.full_window_retry
            if not outcome.kept:
                if outcome.loop:
                    transcription.dropped.append(dropped_window(outcome.heard, seek, segment_frames))
                    history = []  # a loop must not prompt the next window into the same loop
                seek += segment_frames
                continue
            result = outcome.result
            new_segments, advance = self._split_segments(result, seek, segment_frames)
            if options.review is not None and can_force(self.engine):
                started = time.perf_counter()
                options.review(self._evidence(outcome, prompt + history, options, new_segments, seek,
                                               segment_frames))
                timings["review_ms"] = timings.get("review_ms", 0.0) + (time.perf_counter() - started) * 1000
            segments.extend(new_segments)
            seek += advance
            if options.condition_on_previous_text and result.temperature <= 0.5:
                history += result.tokens
            else:
                history = []
        transcription.text = " ".join(s.text for s in segments if s.text)
        transcription.timings_ms = {k: round(v, 3) for k, v in timings.items()}
        return transcription

    def transcribe_many(self, audios: list[np.ndarray], options: DecodeOptions, workers: int) -> list[Transcription]:
        """Independent pieces of one recording (its VAD chunks), decoded side by side on `workers` threads.

        Each piece keeps its own seek loop, prompt history and seeded sampling, so every text is exactly what
        transcribing the pieces one by one gives. The decoder runs on one thread (DECODER_THREADS) and its
        ops release the GIL, so pieces overlap on the other cores: one chunk's temperature fallback no
        longer holds up the rest (45 s file, 2 cores: 5.5-6.3 s one by one, 3.5 s side by side).
        Not batched into one decoder call: pieces differ in audio length, prompt length and fallback
        schedule, and padding them changes the numbers enough to flip beam choices.
        """
        if workers <= 1 or len(audios) <= 1:
            return [self.transcribe(audio, options) for audio in audios]
        from concurrent.futures import ThreadPoolExecutor

        _share_one_malloc_arena()
        longest_first = sorted(range(len(audios)), key=lambda i: -len(audios[i]))  # the long tail starts early
        with ThreadPoolExecutor(max_workers=min(workers, len(audios)), thread_name_prefix="whisper") as pool:
            futures = {i: pool.submit(self.transcribe, audios[i], options) for i in longest_first}
            return [futures[i].result() for i in range(len(audios))]

    def _evidence(self, outcome: Any, prompt: list[int], options: DecodeOptions, segments: list[Segment],
                  seek: int, segment_frames: int) -> WindowEvidence:
        from tcccd.plugins.whisper.engine.decoding import initial_tokens

        audio = WindowAudio(self.engine.steps, outcome.audio, self.tokenizer.eot, self.tokenizer.continues_word)
        start = initial_tokens(self.tokenizer, options, prompt, self.n_text_ctx)
        firsts = [sum(len(s.tokens) for s in segments[:k]) for k in range(len(segments))]
        return WindowEvidence(audio, start, outcome.result.tokens, segments, firsts,
                              -(-segment_frames // FRAMES_PER_POSITION), seek * HOP_LENGTH / SAMPLE_RATE_HZ)

    def _suppressed(self, options: DecodeOptions) -> tuple[int, ...]:
        chosen = self.suppress if options.suppress_tokens is None else options.suppress_tokens
        return tuple(sorted(set(chosen) | set(self.tokenizer.non_speech_tokens())))

    def _split_segments(self, result: WindowResult, seek: int, segment_frames: int) -> tuple[list[Segment], int]:
        """openai's timestamp slicing: segments between consecutive timestamps; the seek moves to the last one."""
        tokens, begin = result.tokens, self.tokenizer.timestamp_begin
        offset_s = seek * HOP_LENGTH / SAMPLE_RATE_HZ
        is_ts = [t >= begin for t in tokens]
        single_ending = is_ts[-2:] == [False, True]
        cuts = [i + 1 for i in range(len(tokens) - 1) if is_ts[i] and is_ts[i + 1]]
        if not cuts:
            stamps = [t for t in tokens if t >= begin]
            duration_s = segment_frames * HOP_LENGTH / SAMPLE_RATE_HZ
            if stamps and stamps[-1] != begin:
                duration_s = (stamps[-1] - begin) * SECONDS_PER_TIMESTAMP
            segment = self._segment(tokens, offset_s, offset_s + duration_s, result)
            return [segment], self._consumed(stamps, segment_frames)
        if single_ending:
            cuts.append(len(tokens))
        segments, last = [], 0
        for cut in cuts:
            piece = tokens[last:cut]
            start_s = offset_s + (piece[0] - begin) * SECONDS_PER_TIMESTAMP
            end_s = offset_s + (piece[-1] - begin) * SECONDS_PER_TIMESTAMP
            segments.append(self._segment(piece, start_s, end_s, result))
            last = cut
        if single_ending:
            return segments, self._consumed([t for t in tokens if t >= begin], segment_frames)
        return segments, (tokens[last - 1] - begin) * FRAMES_PER_POSITION

    def _consumed(self, stamps: list[int], segment_frames: int) -> int:
        """Frames of the window the decode accounts for: all of them, unless its text ended (end of text after a
        timestamp) more than EARLY_END_S before the window's audio does. openai's rule seeks past the whole window
        then, and the speech after that point was lost: a real 72 s recording lost a 14 s sentence this way, with
        nothing reported. The seek stops at the last timestamp instead, so the rest is decoded (or found silent)."""
        if not stamps:
            return segment_frames
        last = (stamps[-1] - self.tokenizer.timestamp_begin) * FRAMES_PER_POSITION
        early = (segment_frames - last) * HOP_LENGTH / SAMPLE_RATE_HZ > EARLY_END_S
        return last if last > 0 and early else segment_frames

    def _segment(self, tokens: list[int], start_s: float, end_s: float, result: WindowResult) -> Segment:
        return Segment(start_s=round(start_s, 3), end_s=round(end_s, 3),
                       text=self.tokenizer.decode(tokens).strip(), tokens=tokens,
                       avg_logprob=result.avg_logprob, no_speech_prob=result.no_speech_prob,
                       compression_ratio=result.compression_ratio, temperature=result.temperature)
