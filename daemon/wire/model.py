"""What every reply model shares: read from a message's `data`, written back into one, checked for what it promises.

One small pydantic model per reply type (tcccd.wire.replies, tcccd.wire.status,
tcccd.wire.errors), as the `wyoming` package has one class per event: the daemon
builds replies through them, and readers (the Python client, the CLI, the
Wyoming door) read typed fields instead of `data.get(...)`.

Every reply model accepts keys it does not declare, so a client keeps working
against a newer daemon. What differs is who may add them: an `OpenReply` is one
plugins extend (a transcript's segments, a stage's plugin_health), and its extra
keys are theirs; any other reply is tcccd's own, and `undocumented()` lists the
keys it carries that no model declares, so a test holds the daemon's replies to
the models (and, through tcccd.wire.reference, to docs/protocol.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from tcccd.wire.validation import format_validation_error

if TYPE_CHECKING:
    from tcccd.wire.protocol import Message

Float = Annotated[float, Field(strict=True)]
Int = StrictInt
Str = StrictStr
Bool = StrictBool
R = TypeVar("R", bound="Reply")


class ReplyInvalid(ValueError):
    """A reply's `data` does not hold what its type promises; says which field and what is accepted."""


class Reply(BaseModel):
    """One reply type's `data`. `TYPE` is the message type it travels as."""

    model_config = ConfigDict(extra="allow")
    TYPE: ClassVar[str] = ""

    @classmethod
    def from_data(cls: type[R], data: dict[str, Any], where: str = "data") -> R:
        """The typed form of `data` (a message's, or the part of one at `where`, as errors name it)."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(format_validation_error(cls, exc, where))
            raise ReplyInvalid(f"{cls.TYPE or cls.__name__!r} reply breaks the protocol: {problems}") from None

    @classmethod
    def from_message(cls: type[R], message: Message) -> R:
        """The typed reply in `message`; ReplyInvalid when its data breaks what the type promises."""
        if cls.TYPE and message.type != cls.TYPE:
            raise ReplyInvalid(f"expected a {cls.TYPE!r} reply, got {message.type!r}")
        return cls.from_data(message.data)

    def to_data(self) -> dict[str, Any]:
        """The `data` of a message: JSON types, and only the keys that were set (absent stays absent)."""
        return self.model_dump(mode="json", exclude_unset=True)

    def answer(self, request: Message, final: bool = True) -> Message:
        """This reply as the answer to `request` (same id and stream)."""
        return request.reply(self.TYPE, self.to_data(), final=final)


class OpenReply(Reply):
    """A reply plugins extend: keys it does not declare are the plugin's own, never `undocumented()`."""


def undocumented(model: BaseModel, path: str = "data") -> list[str]:
    """Keys, as paths, that a reply of tcccd's own carries and no model declares (a plugin's own keys excepted)."""
    found = [] if isinstance(model, OpenReply) else [f"{path}.{key}" for key in (model.model_extra or {})]
    for name in type(model).model_fields:
        found += _undocumented_in(getattr(model, name), f"{path}.{name}")
    return found


def _undocumented_in(value: Any, path: str) -> list[str]:
    if isinstance(value, BaseModel):
        return undocumented(value, path)
    if isinstance(value, list):
        return [p for item in value for p in _undocumented_in(item, f"{path}[]")]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _undocumented_in(item, f"{path}.{key}")]
    return []
