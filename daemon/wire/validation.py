"""Turning pydantic validation errors into messages an operator can act on.

`pipeline[2].params.beam_size: expected an integer >= 1, got 'five'` says the
key path, what is accepted and what was found; pydantic's own wording says
neither the accepted range nor, for unknown keys, what is allowed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError


def key_path(loc: tuple[Any, ...] | list[Any], prefix: str = "") -> str:
    path = prefix
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema.get("$defs", {})[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _schema_at(schema: dict[str, Any], loc: tuple[Any, ...]) -> dict[str, Any] | None:
    node = _resolve(schema, schema)
    for part in loc:
        options = [_resolve(schema, n) for n in node.get("anyOf", [node])]
        nxt = None
        for opt in options:
            if isinstance(part, int) and "items" in opt:
                nxt = opt["items"]
            elif isinstance(part, str) and part in opt.get("properties", {}):
                nxt = opt["properties"][part]
            elif isinstance(part, str) and isinstance(opt.get("additionalProperties"), dict):
                nxt = opt["additionalProperties"]
            if nxt is not None:
                break
        if nxt is None:
            return None
        node = _resolve(schema, nxt)
    return node


_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "null": "null"}


def describe(schema: dict[str, Any], node: dict[str, Any]) -> str:
    node = _resolve(schema, node)
    if "anyOf" in node:
        return " or ".join(describe(schema, n) for n in node["anyOf"])
    if "enum" in node:
        return "one of " + ", ".join(repr(v) for v in node["enum"])
    if "const" in node:
        return repr(node["const"])
    words = _TYPE_WORDS.get(node.get("type", ""), "a value")
    bounds = [f"{op} {node[key]}" for key, op in
              (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<"))
              if key in node]
    if "minLength" in node:
        bounds.append(f"of at least {node['minLength']} characters")
    if "pattern" in node:
        bounds.append(f"matching {node['pattern']}")
    if "minItems" in node:
        bounds.append(f"with at least {node['minItems']} items")
    return " ".join([words, " and ".join(bounds)]).strip()


def _got(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def format_error(model: type[BaseModel], error: dict[str, Any], prefix: str = "") -> str:
    loc = tuple(error["loc"])
    path = key_path(loc, prefix)
    schema = model.model_json_schema()
    if error["type"] == "extra_forbidden":
        parent = _schema_at(schema, loc[:-1]) or {}
        accepted = ", ".join(sorted(parent.get("properties", {}))) or "none"
        return f"{path}: unknown key (accepted keys here: {accepted})"
    if error["type"] == "missing":
        return f"{path}: required key is missing"
    node = _schema_at(schema, loc)
    if node is None or error["type"] in ("value_error", "assertion_error"):
        return f"{path}: {error['msg'].removeprefix('Value error, ')}, got {_got(error.get('input'))}"
    return f"{path}: expected {describe(schema, node)}, got {_got(error.get('input'))}"


def format_validation_error(model: type[BaseModel], exc: ValidationError, prefix: str = "") -> list[str]:
    return [format_error(model, err, prefix) for err in exc.errors()]
