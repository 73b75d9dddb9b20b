"""A harness that ships with tcccd so a plugin is tested in a few lines.

    with PluginHarness("whisper", {"beam_size": 1}, tmp_path) as h:
        [reply] = h.request(Message("transcribe", payload=wav, final=True, audio=AudioFormat("wav")))
        assert reply.data["text"] == ""

It drives the plugin through the same `Stage` the worker uses, in-process, so a
failure shows a plain traceback instead of a worker restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcccd.kit.stage import Stage
from tcccd.wire.protocol import Message


class PluginHarness:
    def __init__(self, plugin: str, params: dict[str, Any] | None, tmp_dir: Path, profile: str = "field") -> None:
        tmp_dir = Path(tmp_dir)
        self.stage = Stage("under-test", plugin, params or {}, cache_dir=tmp_dir / "cache",
                           state_dir=tmp_dir / "state", profile=profile)

    @property
    def plugin(self) -> Any:
        return self.stage.plugin

    def __enter__(self) -> PluginHarness:
        self.stage.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stage.stop()

    def request(self, message: Message) -> list[Message]:
        """Every output of one input message, in order."""
        return list(self.stage.handle(message))

    def stream(self, messages: list[Message]) -> list[Message]:
        """Feed a request made of several messages (the last with final=True); all outputs."""
        out: list[Message] = []
        for message in messages:
            out += self.request(message)
        return out
