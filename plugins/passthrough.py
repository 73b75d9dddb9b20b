"""A stage that hands every message back unchanged.

It is the reference for the bus: a round trip through it measures tcccd's own
overhead (bench/bus.py), and it lets a pipeline be tested with no model.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from tcccd.kit.plugin import Plugin, PluginParams
from tcccd.wire.protocol import Message


class PassthroughParams(PluginParams):
    pass


class Passthrough(Plugin):
    name = "passthrough"
    inputs = ("*",)
    outputs = ("*",)
    Params = PassthroughParams

    def process(self, message: Message) -> Iterator[Message]:
        yield replace(message, stage=None)
