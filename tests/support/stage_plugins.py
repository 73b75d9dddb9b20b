"""Plugins that misbehave on purpose, loaded by `module:Class` path in test configs.

They are real plugins run by real workers: the daemon cannot tell them from a
model that crashes, hangs or is slow, which is the point.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import Field

from tcccd.kit.plugin import Plugin, PluginContext, PluginError, PluginParams
from tcccd.wire.protocol import AudioFormat, Message


class SlowParams(PluginParams):
    delay_s: float = Field(0.0, ge=0)
    beam_size: int = Field(1, ge=1)
    setup_delay_s: float = Field(0.0, ge=0)


class Slow(Plugin):
    """Echoes after `delay_s`; `hang` blocks forever; `fail` raises; `bad` is refused; data.parts = n sends n
    non-final `part` replies first, each after `delay_s`."""

    name = "slow"
    inputs = ("*",)
    outputs = ("*",)
    Params = SlowParams

    def setup(self) -> None:
        time.sleep(self.params.setup_delay_s)

    def process(self, message: Message) -> Iterator[Message]:
        if message.type == "hang":
            while True:
                time.sleep(1)
        if message.data.get("fail"):
            raise RuntimeError("model exploded")
        if message.type == "transcribe":
            yield message.reply("transcript", {"text": f"{len(message.payload or b'')} bytes heard"}, final=True)
            return
        if message.data.get("unencodable"):
            yield message.reply("echo", {"value": object()}, final=True)
            return
        if message.data.get("bad"):
            raise PluginError("bad input: expected something else", code="bad_audio")
        delay_s = message.data.get("delay_s", self.params.delay_s)
        for part in range(int(message.data.get("parts", 0))):
            time.sleep(delay_s)
            yield message.reply("part", {"part": part})
        time.sleep(delay_s)
        self.log.info("echoing", beam_size=self.params.beam_size)
        yield replace(message, data={**message.data, "beam_size": self.params.beam_size}, stage=None)


class CrashAtSetup(Plugin):
    name = "crash-at-setup"
    inputs = ("*",)
    outputs = ("*",)

    def setup(self) -> None:
        raise RuntimeError("model file is corrupt")


class DictationParams(PluginParams):
    utterance_s: float = Field(5.0, gt=0)


class Dictation(Plugin):
    """A stream-capable stage: counts the audio of each stream, says an 'utterance' every `utterance_s`.

    Its per-stream state is two numbers, as a well-behaved streaming model's should be bounded: the test of
    hours-long dictation then measures the daemon's and the worker's own growth.
    """

    name = "dictation"
    inputs = ("stream",)
    outputs = ("transcript",)
    Params = DictationParams

    def __init__(self, params: PluginParams, context: PluginContext) -> None:
        super().__init__(params, context)
        self._streams: dict[str, list[float]] = {}  # id -> [seconds heard, seconds at the last utterance]

    def process(self, message: Message) -> Iterator[Message]:
        state = self._streams.setdefault(message.id, [0.0, 0.0])
        fmt = message.audio or AudioFormat()
        state[0] += len(message.payload or b"") / fmt.bytes_per_frame / fmt.sample_rate_hz
        if state[0] - state[1] >= self.params.utterance_s:
            state[1] = state[0]
            yield message.reply("transcript", {"partial": False, "end_s": round(state[0], 3)})
        if message.final:
            del self._streams[message.id]
            yield message.reply("transcript", {"heard_s": round(state[0], 3), "streams_held": len(self._streams)},
                                final=True)

    def cancel(self, request_id: str) -> None:
        self._streams.pop(request_id, None)

    def health(self) -> dict[str, Any]:
        return {"streams_held": len(self._streams)}


class FlakyParams(PluginParams):
    ok_file: Path


class CrashUntilFile(Plugin):
    """Set-up fails until `ok_file` exists: a missing model file that someone later puts in place."""

    name = "crash-until-file"
    inputs = ("*",)
    outputs = ("*",)
    Params = FlakyParams

    def setup(self) -> None:
        if not self.params.ok_file.exists():
            raise RuntimeError(f"model file {self.params.ok_file} is missing")

    def process(self, message: Message) -> Iterator[Message]:
        yield replace(message, stage=None)


class PickyParams(PluginParams):
    beam_size: int = Field(1, ge=1)


class Picky(Plugin):
    """Valid Params for any beam size, but refuses beam 7 when applying it (its model is not installed)."""

    name = "picky"
    inputs = ("*",)
    outputs = ("*",)
    Params = PickyParams

    def apply_profile(self, params: PluginParams) -> None:
        if params.beam_size == 7:  # type: ignore[attr-defined]
            raise FileNotFoundError("no beam-7 model installed")
        self.params = params

    def process(self, message: Message) -> Iterator[Message]:
        yield replace(message, data={**message.data, "beam_size": self.params.beam_size}, stage=None)


class Cooperative(Plugin):
    """Works in small steps and asks between them whether anyone still waits, as Whisper and SNAC do."""

    name = "cooperative"
    inputs = ("*",)
    outputs = ("*",)

    def process(self, message: Message) -> Iterator[Message]:
        for _ in range(int(message.data.get("steps", 10_000))):
            self.context.check_cancelled()
            time.sleep(0.01)
        yield replace(message, stage=None)
