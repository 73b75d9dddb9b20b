"""The `whisper` stage: speech to text for files and live streams, gated by VAD, with domain vocabulary.

Defences against invented words: silero-vad decides whether there is speech at all; Whisper's no-speech and
log-probability rules drop what slips through; every rewrite after the model is kept only when the audio supports
it (review.py), and speech no kept word covers is decoded again or reported (coverage.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from tcccd.kit.audio import load_mono
from tcccd.kit.plugin import Plugin, PluginError, PluginParams, cpu_threads, elapsed_ms
from tcccd.plugins.whisper.review.heard import Heard
from tcccd.plugins.whisper.review.review import without_words
from tcccd.plugins.whisper.stage.cover import CoveragePass
from tcccd.plugins.whisper.stage.packing import one_per_chunk, pack_windows
from tcccd.plugins.whisper.stage.params import RELOAD_KEYS, VOCABULARY_KEYS, WhisperParams
from tcccd.plugins.whisper.stage.partials import PartialCounts
from tcccd.plugins.whisper.stage.speculative import Speculation, SpeculationCounts
from tcccd.plugins.whisper.stage.vad import RATE_HZ, Span, SpeechDetector, VadSettings, pack_spans
from tcccd.wire.protocol import Message


class WhisperPlugin(Plugin):
    name = "whisper"
    inputs = ("transcribe", "stream")
    outputs = ("transcript",)
    Params = WhisperParams
    params: WhisperParams

    def __init__(self, params: PluginParams, context: Any) -> None:
        super().__init__(params, context)
        self._transcriber: Any = None
        self._detector: SpeechDetector | None = None
        self._corrector: Any = None
        self._reviewer: Any = None
        self._bias: Any = None
        self._streams: dict[str, Any] = {}
        self._dropped_loops = 0
        self._cover = CoveragePass(self, self.log)
        self._partial_counts = PartialCounts()
        self._partial_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="whisper-partial")  # no thread yet
        self._final_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="whisper-final")
        self._speculation_counts = SpeculationCounts()

    def setup(self) -> None:
        self._detector = SpeechDetector.load(self._vad_settings())
        self._transcriber = self._load_transcriber()
        self._load_vocabulary()

    def warmup(self) -> None:
        """One pass on a second of quiet tone so the first medic's request does not pay for lazy init."""
        tone = 0.05 * np.sin(2 * np.pi * 220 * np.arange(RATE_HZ) / RATE_HZ).astype(np.float32)
        self._transcriber.transcribe(tone, self._options())
        if self._corrector is not None:
            self._corrector.correct("warm up")

    def process(self, message: Message) -> Iterator[Message]:
        if message.type == "transcribe":
            yield self._transcribe(message)
        elif message.type == "stream":
            yield from self._stream(message)
        else:
            raise PluginError(f"whisper accepts {', '.join(self.inputs)}, got {message.type!r}", code="bad_request")

    def _transcribe(self, message: Message) -> Message:
        t0 = time.perf_counter()
        audio = load_mono(message.payload, message.audio, RATE_HZ, max_s=self.params.max_audio_s)
        timings = {"decode_audio_ms": elapsed_ms(t0)}
        t1 = time.perf_counter()
        spans = self._detector.speech_spans(audio)
        chunks = pack_spans(spans, self.params.max_utterance_s, self.params.max_gap_s)
        timings["vad_ms"] = elapsed_ms(t1)
        leads = [self._detector.starts_on_speech(audio[c.start:]) for c in chunks]
        windows = (pack_windows if self.params.pack_windows else one_per_chunk)(audio, chunks, leads=leads)
        results = self._transcriber.transcribe_many([w.audio for w in windows], self._options(review=True),
                                                    workers=self.params.decode_workers or self.params.threads
                                                    or cpu_threads())
        heard = Heard()
        for window, result in zip(windows, results, strict=True):
            self._take(window.on_file_clock(result), 0.0, timings, heard)
        self._cover(audio, [(s.start_s, s.end_s) for s in spans], heard, 0.0, timings)
        timings["total_ms"] = elapsed_ms(t0)
        data = {"text": heard.text, "segments": heard.segments, "duration_s": round(len(audio) / RATE_HZ, 3),
                "timings_ms": _rounded(timings), "backend": self._transcriber.backend, **heard.dropped_field()}
        return message.reply("transcript", data, final=True)

    def decode_piece(self, audio: np.ndarray, offset_s: float, timings: dict[str, float], heard: Heard,
                     check: Callable[[], None] | None = None) -> None:
        """Segments Whisper is confident hold speech, reviewed on the audio, on the recording's clock, into
        `heard` (cover.PieceDecoder); `check` in place of the request's own (work on another thread)."""
        self._take(self._decode_alone(audio, self._options(review=True, check=check)), offset_s, timings, heard)

    def _decode_alone(self, audio: np.ndarray, options: Any) -> Any:
        """One piece of speech decoded on its own (after a pause if it starts on a word: packing.py), with its
        times on the piece's clock."""
        [window] = one_per_chunk(audio, [Span(0, len(audio))], leads=[self._detector.starts_on_speech(audio)])
        return window.on_file_clock(self._transcriber.transcribe(window.audio, options))

    def _take(self, result: Any, offset_s: float, timings: dict[str, float], heard: Heard,
              partial: bool = False) -> None:
        """Add one transcription's kept segments and dropped speech to `heard`; count and log the drops
        (not a partial's: the utterance's final decode decides what was lost)."""
        for key, ms in result.timings_ms.items():
            timings[key] = timings.get(key, 0.0) + ms
        t0 = time.perf_counter()
        for seg in result.segments:
            # a segment no decoder pass checked (partials, ctranslate2): only rewrites that change no word apply
            written = seg.review if seg.review is not None else without_words(self._reviewer.decide(seg.text, None))
            if written is None:
                continue
            heard.add(written, seg.start_s, seg.end_s, seg.avg_logprob, seg.no_speech_prob, offset_s)
            if (written.corrections or written.numbers or written.considered) and not partial:
                self.log.info("transcript rewritten", heard=written.heard, text=written.text,
                              corrections=written.corrections, numbers=written.numbers,
                              considered=written.considered)
        timings["write_ms"] = timings.get("write_ms", 0.0) + elapsed_ms(t0)
        if partial:
            return
        for drop in result.dropped:
            start_s, end_s = round(offset_s + drop.start_s, 3), round(offset_s + drop.end_s, 3)
            self._dropped_loops += 1
            self.log.warning("speech dropped: the decoder could only transcribe it as a loop", start_s=start_s,
                             end_s=end_s, heard=drop.heard)
            heard.dropped.append({"start_s": start_s, "end_s": end_s, "reason": drop.reason})

    def _stream(self, message: Message) -> Iterator[Message]:
        """Finals first: the utterance's end is seen at the chunk that ends it, never behind a partial
        (partials.py runs them on their own thread and abandons the one in flight when a final is due)."""
        session = self._streams.get(message.id) or self._open_stream(message)
        try:
            session.note_seq(message.seq)
            samples = session.samples(message.payload, message.audio, message.final)
            lag_s = session.partials.note_chunk(session.received_samples / RATE_HZ)
            ready = session.partials.take_logged(session.segmenter.next_index, self.log)
            finished = session.segmenter.feed(samples)
            if message.final:
                finished += session.segmenter.flush()
            if finished:
                session.partials.abandon()
            elif ready is not None:
                yield message.reply("transcript", {"partial": True, "text": ready,
                                                   "utterance": session.segmenter.next_index})
            for utterance in finished:
                yield self._utterance_reply(message, session, utterance)
            yield from (message.reply("transcript", entry) for entry in session.lost_at_the_end(message.final))
            self._maybe_speculate(message, session)
            self._maybe_partial(message, session, lag_s)
        except Exception:
            self._close_stream(message.id)
            raise
        if message.final:
            self._close_stream(message.id)
            texts = [u["text"] for u in session.utterances if u["text"]]
            yield message.reply("transcript", {"text": " ".join(texts), "utterances": session.utterances},
                                final=True)

    def _open_stream(self, message: Message) -> Any:
        from tcccd.plugins.whisper.stage.partials import PartialSchedule
        from tcccd.plugins.whisper.stage.streaming import StreamSession

        session = StreamSession.open(message.audio, self._detector, self._vad_settings())
        session.partials = PartialSchedule(self._partial_counts)
        session.speculation = Speculation(self._speculation_counts)
        self._streams[message.id] = session
        return session

    def _close_stream(self, request_id: str) -> None:
        session = self._streams.pop(request_id, None)
        if session is not None:
            session.partials.abandon()
            session.speculation.abandon(count=False)

    def _maybe_speculate(self, message: Message, session: Any) -> None:
        """Once the open utterance's audio is settled in a pause, decode its final now (speculative.py); speech
        that resumed abandons the one in flight."""
        settled = None if message.final else session.segmenter.settled()
        if settled is None:
            session.speculation.abandon()
        elif not session.speculation.running or session.speculation.index != settled[0]:
            session.partials.abandon()
            session.speculation.start(self._final_pool, self._final, *settled)

    def _maybe_partial(self, message: Message, session: Any, lag_s: float) -> None:
        """Start a partial of the utterance so far when one is due, none is in flight and no final is decoding."""
        if message.final or not session.segmenter.in_speech or session.speculation.running:
            return
        audio = session.segmenter.current_audio()  # a new array: the stream goes on while the partial decodes
        if session.partials.due(self.params.partial_interval_ms, len(audio), RATE_HZ, lag_s):
            session.partials.start(self._partial_pool, self._partial_text, audio, session.segmenter.next_index)

    def _partial_text(self, audio: np.ndarray, check: Any) -> str:
        """A partial's text (on the partials' thread): no review, no drops counted; `check` abandons it."""
        heard = Heard()
        self._take(self._decode_alone(audio, self._options(check=check)), 0.0, {}, heard, partial=True)
        return heard.text

    def _final(self, audio: np.ndarray, start_s: float, check: Callable[[], None] | None = None) -> tuple:
        """An utterance's final: (heard, timings), decoded and covered (on the speculative thread, or in line)."""
        timings: dict[str, float] = {}
        heard = Heard()
        self.decode_piece(audio, start_s, timings, heard, check)
        speech = [(start_s + s.start_s, start_s + s.end_s) for s in self._detector.speech_spans(audio)]
        self._cover(audio, speech, heard, start_s, timings, check)
        return heard, timings

    def _utterance_reply(self, message: Message, session: Any, utterance: Any) -> Message:
        parts = session.speculation.take(utterance.index, len(utterance.audio))
        heard, timings = parts if parts is not None else self._final(utterance.audio, utterance.start_s)
        heard.dropped += session.gaps_until(utterance.end_s)  # audio that never came, up to its end
        entry = {"partial": False, "text": heard.text, "utterance": utterance.index,
                 "start_s": round(utterance.start_s, 3), "end_s": round(utterance.end_s, 3), **heard.dropped_field()}
        session.utterances.append(entry)
        return message.reply("transcript", {**entry, "segments": heard.segments, "timings_ms": _rounded(timings)})

    def cancel(self, request_id: str) -> None:
        self._close_stream(request_id)

    def apply_profile(self, params: PluginParams) -> None:
        """New decoding settings take effect at once; only a new model, backend or device reloads weights."""
        old = self.params
        self.params = params  # type: ignore[assignment]
        if self._transcriber is None:
            return
        reload = any(getattr(old, k) != getattr(self.params, k) for k in RELOAD_KEYS)
        if reload:
            self._transcriber = self._load_transcriber()
        if reload or any(getattr(old, k) != getattr(self.params, k) for k in VOCABULARY_KEYS):
            self._load_vocabulary()
        self._detector.configure(self._vad_settings())

    def health(self) -> dict[str, Any]:
        loaded = self._transcriber
        fallbacks = [f"{f.skipped}: {f.reason}" for f in loaded.fallbacks] if loaded else []
        return {"backend": loaded.backend if loaded else self.params.backend, "backend_fallbacks": fallbacks,
                "model": self.params.model or "embedded tiny.en",
                "device": self.params.device, "beam_size": self.params.beam_size,
                "vocabulary_terms": len(self._corrector.terms) if self._corrector else 0,
                "vocabulary_biasing": self._bias is not None,
                "open_streams": len(self._streams), "dropped_loops": self._dropped_loops,
                "not_transcribed": self._cover.not_transcribed, **self._partial_counts.as_health(),
                **self._speculation_counts.as_health()}

    def teardown(self) -> None:
        for request_id in list(self._streams):
            self._close_stream(request_id)
        self._partial_pool.shutdown(wait=True, cancel_futures=True)
        self._final_pool.shutdown(wait=True, cancel_futures=True)
        self._transcriber = None

    def _load_transcriber(self) -> Any:
        from tcccd.kit.accel import precision_for
        from tcccd.plugins.whisper.engine.transcriber import Transcriber

        loaded = Transcriber.load(self.params.model, backend=self.params.backend, device=self.params.device,
                                  cache_dir=Path(self.context.cache_dir) / "whisper",
                                  threads=self.params.threads or cpu_threads(), decoder_int8=self.params.decoder_int8,
                                  fallback_backends=self.params.fallback_backends,
                                  precision=precision_for(self.context.profile), log=self.log)
        for fallback in loaded.fallbacks:
            self.log.warning("whisper fell back", skipped=fallback.skipped, reason=fallback.reason,
                             using=loaded.backend, configured=self.params.backend)
        return loaded

    def _load_vocabulary(self) -> None:
        """The term list feeds the corrector, the decoder bias and the reviewer; one bad file fails all three."""
        from tcccd.plugins.whisper.review.review_setup import build_review

        try:
            self._corrector, self._bias, self._reviewer = build_review(self.params, self._transcriber, self.log)
        except ValueError as exc:
            raise PluginError(str(exc), code="bad_config") from None

    def _options(self, review: bool = False, check: Callable[[], None] | None = None) -> Any:
        """Decoding settings; `review`: check rewrites and time words on each window's audio (final results);
        `check`: what abandons the work, in place of the request's own (work on a thread of the stage's)."""
        from tcccd.plugins.whisper.engine.transcriber import DecodeOptions

        return DecodeOptions(beam_size=self.params.beam_size, audio_context=self.params.audio_context,
                             temperatures=tuple(self.params.temperatures),
                             no_speech_threshold=self.params.no_speech_threshold,
                             check=check or self.context.check_cancelled,
                             logprob_threshold=self.params.logprob_threshold,
                             logits_processors=(self._bias,) if self._bias is not None else (),
                             review=self._reviewer if review else None)

    def _vad_settings(self) -> VadSettings:
        return VadSettings(threshold=self.params.vad_threshold, min_silence_ms=self.params.min_silence_ms,
                           speech_pad_ms=self.params.speech_pad_ms, max_utterance_s=self.params.max_utterance_s)


def _rounded(timings: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 2) for k, v in timings.items()}
