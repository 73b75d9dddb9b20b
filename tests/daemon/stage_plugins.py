"""Plugins that misbehave on purpose, loaded by `module:Class` path in test configs.

They are real plugins run by real workers: the daemon cannot tell them from a
model that crashes, hangs or is slow, which is the point.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

from pydantic import Field

from tcccd.plugin import Plugin, PluginError, PluginParams
from tcccd.protocol import Message


class SlowParams(PluginParams):
    delay_s: float = Field(0.0, ge=0)
    beam_size: int = Field(1, ge=1)
    setup_delay_s: float = Field(0.0, ge=0)


class Slow(Plugin):
    """Echoes after `delay_s`; `hang` blocks forever; `fail` raises; `bad` is refused."""

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
        time.sleep(message.data.get("delay_s", self.params.delay_s))
        self.log.info("echoing", beam_size=self.params.beam_size)
        yield replace(message, data={**message.data, "beam_size": self.params.beam_size}, stage=None)


class CrashAtSetup(Plugin):
    name = "crash-at-setup"
    inputs = ("*",)
    outputs = ("*",)

    def setup(self) -> None:
        raise RuntimeError("model file is corrupt")
