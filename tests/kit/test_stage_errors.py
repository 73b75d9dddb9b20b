"""A plugin's errors reach the wire only under documented codes, as docs/protocol.md promises clients."""

from __future__ import annotations

from collections.abc import Iterator

from tcccd.kit.plugin import Plugin, PluginError
from tcccd.kit.testing import PluginHarness
from tcccd.wire.errors import ErrorReply
from tcccd.wire.protocol import Message


class OwnCodes(Plugin):
    """Raises the code its request names: a plugin author's own, or one tcccd documents."""

    name = "own-codes"
    inputs = ("*",)
    outputs = ("*",)

    def process(self, message: Message) -> Iterator[Message]:
        raise PluginError("the input was not what I wanted", code=message.data["code"])


def test_a_documented_code_passes_and_an_undocumented_one_becomes_plugin_error(tmp_path):
    with PluginHarness(f"{__name__}:OwnCodes", None, tmp_path) as harness:
        [kept] = harness.request(Message("check", data={"code": "bad_audio"}, final=True))
        [mapped] = harness.request(Message("check", data={"code": "input_too_weird"}, final=True))
    assert ErrorReply.from_message(kept).code == "bad_audio"
    error = ErrorReply.from_message(mapped)
    assert error.code == "plugin_error" and mapped.final
    assert "the input was not what I wanted" in error.message and "'input_too_weird'" in error.message
