"""A stand-in for the ASR in daemon tests of the casualty card: the `transcribe` payload is the words heard, as text.

Only the sound-to-words step is stood in: the words go through Whisper's real
writing steps (vocabulary correction, numbers: tests.support.card_scenarios.
segment), so the final transcript carries the same `text`, `heard`,
`corrections[]` and `numbers[]` a real one does, and from there on everything is
the daemon's own (journal, card keeper, card stage, card log). A real plugin in
a real worker; loaded by `module:Class` path in test configs.
"""

from __future__ import annotations

from collections.abc import Iterator

from tcccd.kit.plugin import Plugin, PluginParams
from tcccd.wire.protocol import Message

SCRIBE = "tests.support.scribe:Scribe"


class Scribe(Plugin):
    name = "scribe"
    inputs = ("transcribe",)
    outputs = ("transcript",)
    Params = PluginParams

    def process(self, message: Message) -> Iterator[Message]:
        from tests.support.card_scenarios import segment

        heard = (message.payload or b"").decode()
        seg = segment(heard, [])
        yield message.reply("transcript", {"text": seg["text"], "segments": [seg], "duration_s": 3.0}, final=True)
