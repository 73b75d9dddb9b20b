"""docs/protocol.md's field reference, written from the request and reply models.

The models are the one description of every field; the doc's reference section
is rendered from them (one table per model: field, type, default, meaning) and a
test fails when the two differ, so a field added to a model and not to the doc,
or named in the doc and in no model, cannot land. Regenerate it after changing a
model with `python -m tcccd.wire.reference --write docs/protocol.md`.
"""

from __future__ import annotations

import argparse
import enum
import json
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from tcccd.wire.messages import REQUESTS
from tcccd.wire.model import OpenReply
from tcccd.wire.replies import REPLIES

BEGIN = "<!-- field reference: begin -->"
END = "<!-- field reference: end -->"
NOTE = "<!-- generated from the models: `python -m tcccd.wire.reference --write docs/protocol.md`; not by hand -->"
_SCALARS = {str: "string", int: "int", float: "number", bool: "bool", type(None): "null", Any: "any"}


def type_text(annotation: Any) -> str:
    """A field's type as the doc writes it: `list of Segment`, `number or null`, `` `ok` | `failing` ``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return type_text(args[0])
    if origin in (typing.Union, types.UnionType):
        names = list(dict.fromkeys(type_text(a) for a in args))
        return " or ".join(n for n in names if not (n == "int" and "number" in names))  # an int is a number
    if origin is Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {type_text(args[0])}"
    if origin is dict:
        return f"object of {type_text(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    return _SCALARS[annotation]


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    return f"`{json.dumps(value)}`"


def _parts(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type refers to, at any depth."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _parts(arg)]


def _table(model: type[BaseModel], heading: str, says: str) -> list[str]:
    if issubclass(model, OpenReply):
        says += " Plugins may add keys of their own."
    lines = [f"#### {heading}", "", says.strip(), ""] if says.strip() else [f"#### {heading}", ""]
    if not model.model_fields:
        return [*lines, "Nothing in `data`.", ""]
    base = model.__mro__[1]
    inherited = base.model_fields if issubclass(base, BaseModel) else {}
    if inherited:
        lines += [f"Every field of [{base.__name__}](#{base.__name__.lower()}), and:", ""]
    lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        if name in inherited:
            continue
        meaning = (field.description or "").replace("|", "\\|")
        lines.append(f"| `{name}` | {type_text(field.annotation)} | {_default_text(field)} | {meaning} |")
    return [*lines, ""]


def _doc(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())


def render() -> str:
    """The whole reference section, markers included."""
    lines = [BEGIN, NOTE, "", "### Requests: `data` by type", ""]
    by_model: dict[type[BaseModel], list[str]] = {}
    for kind, model in REQUESTS.items():
        by_model.setdefault(model, []).append(f"`{kind}`")
    for model, kinds in by_model.items():
        lines += _table(model, model.__name__, f"Requests {', '.join(kinds)}. {_doc(model)}".strip())
    lines += ["### Replies and events: `data` by type", ""]
    parts: list[type[BaseModel]] = []
    for kind, model in REPLIES.items():
        lines += _table(model, model.__name__, f"Type `{kind}`. {_doc(model)}".strip())
        parts += [p for field in model.model_fields.values() for p in _parts(field.annotation)]
        for kind_model in model.__subclasses__():  # one model per kind of an event (the alerts)
            lines += _table(kind_model, kind_model.__name__, _doc(kind_model))
        parts += getattr(model, "PAYLOAD_PARTS", ())  # what its payload holds (a transcripts reply's entries)
    lines += ["### Parts of replies", ""]
    seen = set(REPLIES.values())
    while parts:
        part = parts.pop(0)
        if part in seen:
            continue
        seen.add(part)
        lines += _table(part, part.__name__, _doc(part))
        parts += [p for field in part.model_fields.values() for p in _parts(field.annotation)]
        parts += part.__subclasses__()  # a part's specialisations (CaptureHealth after PluginHealth)
    return "\n".join([*lines, END])


def rewrite(doc: str) -> str:
    """`doc` with its reference section replaced by a fresh one."""
    head, begun, rest = doc.partition(BEGIN)
    _, ended, tail = rest.partition(END)
    if not (begun and ended):
        raise ValueError(f"no reference section to replace: the doc needs the lines {BEGIN} and {END}")
    return head + render() + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="DOC", help="replace DOC's reference section in place")
    args = parser.parse_args(argv)
    if args.write is None:
        print(render())
    else:
        args.write.write_text(rewrite(args.write.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
