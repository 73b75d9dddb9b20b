"""The `whisper` stage's settings, and which of them reload the model or the vocabulary when a profile changes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tcccd.kit.plugin import PluginParams
from tcccd.plugins.whisper.review.review import ReviewSettings

RELOAD_KEYS = ("model", "backend", "fallback_backends", "device", "threads", "decoder_int8")
VOCABULARY_KEYS = ("vocabulary", "vocabulary_correction", "vocabulary_min_similarity", "vocabulary_biasing",
                   "write_numbers", "term_margin_logprob", "number_margin_logprob", "bias_margin_logprob",
                   "uncertain_below", "twin_margin_logprob", "form_margin_logprob")


class WhisperParams(PluginParams):
    model: str | None = Field(None, description="CTranslate2/openai model directory; null = embedded tiny.en")
    backend: Literal["onnxruntime", "torch", "ctranslate2", "tensorrt"] = "onnxruntime"
    fallback_backends: tuple[Literal["onnxruntime", "torch", "ctranslate2", "tensorrt"], ...] = Field(
        ("onnxruntime", "torch"), description="tried in order when `backend` cannot load here (no GPU, no TensorRT, "
        "a failed engine build); shown in status and logged. () = fail instead")
    device: str = "cpu"
    threads: int | None = Field(None, ge=1, description="compute threads; null = the cores this process may use")
    decoder_int8: bool = Field(True, description="CPU: int8 output projection, ~8x faster per token")
    decode_workers: int | None = Field(None, ge=1, description="a file's VAD chunks decoded at once; null = threads "
                                       "(2 cores, 45 s file: 2 -> ~332 MiB VmHWM; bench/asr_worker_memory.py)")
    beam_size: int = Field(5, ge=1, le=16, description="1 = greedy")
    audio_context: Literal["full", "auto"] = Field("full", description="what the encoder sees of a window: the 30 s "
                                                   "it was trained on, or `auto`, only the frames holding audio "
                                                   "plus 1 s (decoded again with the full window where that "
                                                   "looks wrong: window_policy.py)")
    temperatures: tuple[float, ...] = Field((0.0, 0.2, 0.4, 0.6, 0.8, 1.0), min_length=1)
    no_speech_threshold: float = Field(0.6, ge=0, le=1)
    logprob_threshold: float = Field(-1.0, le=0)
    vad_threshold: float = Field(0.5, gt=0, lt=1, description="silero-vad speech probability")
    min_silence_ms: int = Field(500, ge=64, description="pause that ends an utterance")
    speech_pad_ms: int = Field(200, ge=0, le=1000)
    max_utterance_s: float = Field(30.0, gt=1, le=30, description="an utterance is cut here (Whisper's window)")
    max_gap_s: float = Field(1.0, ge=0, description="pauses up to this join phrases into one chunk")
    pack_windows: bool = Field(True, description="a file's chunks packed into as few 30 s windows as they fill, "
                               "times mapped back (packing.py); false = one decoder pass per chunk")
    max_audio_s: float = Field(600.0, gt=0, description="longest file accepted by 'transcribe'")
    partial_interval_ms: int = Field(500, ge=100)
    vocabulary: str | None = Field(None, description="term list; null = the packaged profiles/medical_vocab.txt")
    vocabulary_correction: bool = True
    vocabulary_min_similarity: float = Field(0.75, gt=0.5, le=1.0, description="sound similarity to rewrite a run")
    vocabulary_biasing: bool = Field(True, description="nudge beam search toward lexicon terms the audio supports "
                                     "(biasing.py; not on the ctranslate2 backend)")
    write_numbers: bool = Field(True, description="numbers, doses, vitals and times as a medic writes them "
                                "(0915, 120/80, 92%, 1 g TXA); each segment keeps what was heard")
    term_margin_logprob: float = Field(ReviewSettings.vocabulary_margin_logprob, ge=-100, le=100,
                                       description="a lexicon term replaces heard words only if the audio scores "
                                       "it at most this many nats below them (review.py; tuned on tune.txt)")
    number_margin_logprob: float = Field(ReviewSettings.number_margin_logprob, ge=-100, le=100,
                                         description="the same for a number grouping the model did not write "
                                         "('110' for '100 and 10', '0915' for '0-9-15')")
    bias_margin_logprob: float = Field(ReviewSettings.bias_margin_logprob, ge=-100, le=100,
                                       description="a term the decoder bias chose stays if the audio scores it "
                                       "at most this many nats below the unbiased decoder's reading")
    uncertain_below: float = Field(ReviewSettings.uncertain_below, ge=0, le=1,
                                   description="words the model gives a lower probability are listed in each "
                                   "segment's `uncertain` (tuned on tune.txt)")
    twin_margin_logprob: float = Field(ReviewSettings.twin_margin_logprob, ge=-100, le=100,
                                       description="a number is listed in `uncertain` when the audio scores its "
                                       "twin (50 for 15, 0950 for 0915) at most this many nats below it "
                                       "(number_twins.py; tuned on tune.txt)")
    form_margin_logprob: float = Field(ReviewSettings.form_margin_logprob, ge=-100, le=100,
                                       description="a number in a form no time or quantity has ('0.922' after "
                                       "'at', '1 30' after 'pulse') is written as its reading from the digits "
                                       "heard when the audio scores it at most this many nats below them; "
                                       "otherwise, or when another reading scores close, it is listed in "
                                       "`uncertain` with every reading (number_forms.py; tuned on tune.txt)")
