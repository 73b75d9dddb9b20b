"""Plugins that hold real memory, loaded by `module:Class` path in the capper's end-to-end tests.

`Hog` keeps `resident_mb` for as long as it is loaded (a model) and, per
request, adds `cache_mb` to a cache that only `release_memory` empties (a
decoder's buffers). The pages are written, so they count in RSS and PSS like
a real model's weights.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from pydantic import Field

from tcccd.kit.plugin import Plugin, PluginParams
from tcccd.wire.protocol import Message

MIB = 2**20


def _touched(size_mb: int) -> bytearray:
    block = bytearray(size_mb * MIB)
    block[::4096] = b"\x01" * len(range(0, len(block), 4096))  # write every page: resident, not just reserved
    return block


class HogParams(PluginParams):
    resident_mb: int = Field(0, ge=0, description="held from setup to teardown")
    cache_mb: int = Field(0, ge=0, description="added to the cache by each request")
    delay_s: float = Field(0.0, ge=0, description="time each request takes")


class Hog(Plugin):
    name = "hog"
    inputs = ("*",)
    outputs = ("*",)
    Params = HogParams

    def setup(self) -> None:
        self.resident = _touched(self.params.resident_mb)
        self.cache: list[bytearray] = []
        self.releases = 0

    def process(self, message: Message) -> Iterator[Message]:
        time.sleep(self.params.delay_s)
        if self.params.cache_mb:
            self.cache.append(_touched(self.params.cache_mb))
        yield message.reply("echo", {"pid": os.getpid(), "cache_mb": len(self.cache) * self.params.cache_mb,
                                     "releases": self.releases}, final=True)

    def release_memory(self) -> None:
        self.cache.clear()
        self.releases += 1

    def health(self) -> dict[str, int]:
        return {"cache_mb": len(self.cache) * self.params.cache_mb, "releases": self.releases}


class BadRelease(Hog):
    """A plugin whose release_memory fails: the others must still be released."""

    name = "bad-release"

    def release_memory(self) -> None:
        raise RuntimeError("cannot free the arena")
