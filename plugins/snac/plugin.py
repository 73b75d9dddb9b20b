"""The `snac` stage: Orpheus audio tokens in, 24 kHz speech out, streamed as it is decoded.

Tokens come from a client over ZeroMQ (several messages per request, integer
ids or `<custom_token_N>` text) or from an OpenAI-compatible completions
endpoint the plugin streams from itself (one message carrying a prompt). Either
way they feed the same per-request `CodeStream` and `StreamingDecoder`.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from tcccd.kit.audio import to_pcm16
from tcccd.kit.plugin import Plugin, PluginError, PluginParams, cpu_threads, elapsed_ms
from tcccd.wire.protocol import AudioFormat, Message

from .completions import stream_completion
from .model import WEIGHTS_FILE, check_weights_dir, load_codes_decoder
from .streaming import BlockPolicy, StreamingDecoder
from .tokens import CodeStream, TokenTextParser, audio_token_ids


class SnacParams(PluginParams):
    weights_dir: Path = Field(description="directory in the hubertsiuzdak/snac_24khz layout; no weights ship")
    backend: Literal["torch", "onnxruntime"] = "torch"
    device: str = Field("cpu", pattern=r"^(cpu|cuda(:\d+)?)$", description="cuda runs torch in fp16")
    threads: int | None = Field(None, ge=1, le=64, description="CPU threads; default: the cores this process has")
    noise: bool = Field(True, description="SNAC's decoder noise, as trained; off makes decoding deterministic")
    context_frames: int = Field(2, ge=0, le=8)
    lookahead_frames: int = Field(2, ge=0, le=8)
    first_block_frames: int = Field(2, ge=1, le=64)
    max_block_frames: int = Field(12, ge=1, le=64)
    max_frames: int = Field(4096, ge=1, description="frames per request (4096 = 5.8 min), bounds memory")
    completions_url: str = "http://127.0.0.1:8080/v1/completions"
    completions_model: str = "orpheus"
    max_tokens: int = Field(4096, ge=7, le=65536)
    temperature: float = Field(0.6, ge=0.0, le=2.0)
    top_p: float = Field(0.9, gt=0.0, le=1.0)
    repeat_penalty: float = Field(1.1, ge=1.0, le=2.0)
    connect_timeout_s: float = Field(5.0, gt=0)
    read_timeout_s: float = Field(30.0, gt=0)


@dataclass
class _Request:
    decoder: StreamingDecoder
    codes: Any
    parser: TokenTextParser = field(default_factory=TokenTextParser)
    started_s: float = field(default_factory=time.perf_counter)
    first_audio_ms: float | None = None
    seq: int = 0
    cancelled: bool = False


class SnacPlugin(Plugin):
    name = "snac"
    inputs = ("speak.tokens",)
    outputs = ("audio",)
    Params = SnacParams
    params: SnacParams

    def __init__(self, params: PluginParams, context: Any) -> None:
        super().__init__(params, context)
        self._requests: dict[str, _Request] = {}
        self._failed: OrderedDict[str, str] = OrderedDict()
        self._backend: Any = None

    def setup(self) -> None:
        check_weights_dir(self.params.weights_dir)
        self._load()

    def _load(self) -> None:
        p = self.params
        module, self._rate_hz, self._samples_per_frame = load_codes_decoder(p.weights_dir, p.noise)
        threads = p.threads or cpu_threads()
        if p.backend == "onnxruntime":
            from .backends import OnnxBackend

            providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if p.device != "cpu" else [
                "CPUExecutionProvider"]
            self._backend = OnnxBackend(module, p.weights_dir / WEIGHTS_FILE, self.context.cache_dir, threads,
                                        p.noise, providers)
        else:
            from .backends import TorchBackend

            self._backend = TorchBackend(module, p.device, threads, self._precision())
        self._loaded_dtype = self._precision()
        self._policy = BlockPolicy(p.context_frames, p.lookahead_frames, p.first_block_frames, p.max_block_frames)
        self._format = AudioFormat("pcm_s16le", self._rate_hz, 1)

    def _precision(self) -> str:
        """The profile's torch dtype for the CUDA path (emergency/field FP16, training FP32); CPU is always FP32."""
        from tcccd.kit.accel import precision_for

        return precision_for(self.context.profile).torch_dtype

    def warmup(self) -> None:
        self._backend.prepare(self._policy.window_sizes())

    def apply_profile(self, params: PluginParams) -> None:
        old, self.params = self.params, params  # type: ignore[assignment]
        reload_keys = ("weights_dir", "backend", "device", "threads", "noise")
        new_precision = params.device != "cpu" and self._precision() != self._loaded_dtype  # type: ignore[attr-defined]
        if any(getattr(old, k) != getattr(params, k) for k in reload_keys) or new_precision:
            self._load()
        else:
            self._policy = BlockPolicy(params.context_frames, params.lookahead_frames,  # type: ignore[attr-defined]
                                       params.first_block_frames, params.max_block_frames)  # type: ignore[attr-defined]
        self.warmup()

    def cancel(self, request_id: str) -> None:
        request = self._requests.pop(request_id, None)
        if request is not None:
            request.cancelled = True

    def health(self) -> dict[str, Any]:
        return {"backend": getattr(self._backend, "name", None), "active_requests": len(self._requests),
                "weights_dir": str(self.params.weights_dir)}

    def teardown(self) -> None:
        self._requests.clear()
        self._backend = None

    def process(self, message: Message) -> Iterator[Message]:
        if message.id in self._failed:
            if message.final:
                raise PluginError(self._failed.pop(message.id), code="bad_tokens")
            return
        try:
            yield from self._process(message)
        except PluginError as exc:
            self._requests.pop(message.id, None)
            if not message.final:
                self._remember_failure(message.id, f"this request already failed: {exc}")
            raise
        except BaseException:
            self._requests.pop(message.id, None)
            raise

    def _process(self, message: Message) -> Iterator[Message]:
        data = message.data
        given = [k for k in ("tokens", "text", "prompt") if k in data]
        if not given and message.final and message.id in self._requests:
            yield from self._feed(message, self._requests[message.id], [], True)  # an empty closing message
            return
        if len(given) != 1:
            raise PluginError(f"speak.tokens data must hold exactly one of 'tokens' (list of Orpheus custom-token "
                              f"numbers), 'text' ('<custom_token_N>...') or 'prompt'; got keys {sorted(data)}")
        if given == ["prompt"]:
            yield from self._from_completions(message)
            return
        request = self._request(message.id)
        numbers = _token_numbers(data["tokens"]) if "tokens" in data else request.parser.feed(_text(data["text"]))
        yield from self._feed(message, request, numbers, message.final)

    def _request(self, request_id: str) -> _Request:
        if request_id not in self._requests:
            decoder = StreamingDecoder(self._backend, self._policy, self._samples_per_frame)
            self._requests[request_id] = _Request(decoder=decoder, codes=CodeStream())
        return self._requests[request_id]

    def _from_completions(self, message: Message) -> Iterator[Message]:
        if not message.final or message.id in self._requests:
            raise PluginError("a 'prompt' request must be one message with final=true; token streams from a client "
                              "use 'tokens' or 'text' instead")
        prompt, p = message.data["prompt"], self.params
        if not isinstance(prompt, str) or not prompt.strip():
            raise PluginError(f"'prompt' must be non-empty text, got {prompt!r}")
        url = message.data.get("completions_url") or p.completions_url
        body = {"model": p.completions_model, "prompt": prompt, "max_tokens": p.max_tokens,
                "temperature": p.temperature, "top_p": p.top_p, "repeat_penalty": p.repeat_penalty}
        request = self._request(message.id)
        for piece in stream_completion(url, body, p.connect_timeout_s, p.read_timeout_s):
            if request.cancelled:
                return
            self.context.check_cancelled()
            yield from self._feed(message, request, request.parser.feed(piece), end_of_stream=False)
        yield from self._feed(message, request, [], end_of_stream=True)

    def _feed(self, message: Message, request: _Request, numbers: Iterable[int],
              end_of_stream: bool) -> Iterator[Message]:
        request.codes.extend(audio_token_ids(numbers))
        if request.codes.frames > self.params.max_frames:
            raise PluginError(f"request exceeds max_frames={self.params.max_frames} "
                              f"({self.params.max_frames * self._samples_per_frame / self._rate_hz:.0f} s of audio)",
                              code="too_long")
        for samples in request.decoder.ready(request.codes, end_of_stream):
            if request.first_audio_ms is None:
                request.first_audio_ms = round(elapsed_ms(request.started_s), 1)
            request.seq += 1
            yield message.reply("audio", {"frames": len(samples) // self._samples_per_frame}, seq=request.seq,
                                payload=to_pcm16(samples), audio=self._format)
            self.context.check_cancelled()  # between blocks: a cancelled or overdue request stops here
        if end_of_stream:
            yield self._final(message, request)

    def _final(self, message: Message, request: _Request) -> Message:
        self._requests.pop(message.id, None)
        frames = request.decoder.emitted_frames
        if frames == 0:
            raise PluginError("the request ended before one whole frame of audio tokens (7 tokens) arrived; "
                              "send Orpheus audio tokens <custom_token_N> with N >= 10", code="no_tokens")
        return message.reply("audio", {"duration_s": round(frames * self._samples_per_frame / self._rate_hz, 3),
                                       "sample_rate_hz": self._rate_hz, "frames": frames,
                                       "first_audio_ms": request.first_audio_ms},
                             seq=request.seq + 1, final=True, payload=b"", audio=self._format)

    def _remember_failure(self, request_id: str, text: str) -> None:
        self._failed[request_id] = text
        while len(self._failed) > 256:
            self._failed.popitem(last=False)


def _token_numbers(tokens: Any) -> list[int]:
    if not isinstance(tokens, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) and 0 <= t < 2**31 for t in tokens):
        raise PluginError(f"'tokens' must be a list of integers (Orpheus custom-token numbers N of "
                          f"<custom_token_N>), got {str(tokens)[:80]}")
    return tokens


def _text(text: Any) -> str:
    if not isinstance(text, str):
        raise PluginError(f"'text' must be a string of <custom_token_N> tokens, got {type(text).__name__}")
    return text
