"""docs/protocol.md held to the models: every error code, request type, and field of every request and reply.

The doc's field reference is generated from the models (tcccd.wire.reference);
these tests fail when a model gains a field the doc does not list, when the doc
lists or names (`data.x` in its prose) a field no model has, or when a type or
meaning in the doc is not the model's.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from tcccd.wire import reference
from tcccd.wire.alerts import KINDS
from tcccd.wire.errors import ERROR_CODES, ErrorReply
from tcccd.wire.messages import REQUESTS, check_request
from tcccd.wire.protocol import Message
from tcccd.wire.replies import REPLIES
from tcccd.wire.status import CaptureHealth

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def _section(title: str) -> str:
    return DOC.read_text().split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def documented_fields(doc: str) -> dict[str, set[str]]:
    """Per model heading of the field reference, the fields its table lists."""
    section = doc.split(reference.BEGIN, 1)[1].split(reference.END, 1)[0]
    tables: dict[str, set[str]] = {}
    for block in section.split("\n#### ")[1:]:
        heading, _, body = block.partition("\n")
        tables[heading.strip()] = set(re.findall(r"^\| `([a-z_0-9]+)` \|", body, re.MULTILINE))
    return tables


def all_models() -> dict[str, type[BaseModel]]:
    """Every model the protocol is made of: requests, replies, and the parts they contain."""
    found: dict[str, type[BaseModel]] = {}
    todo: list[type[BaseModel]] = [*REQUESTS.values(), *REPLIES.values(), CaptureHealth, *KINDS.values()]
    while todo:
        model = todo.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        todo += [p for field in model.model_fields.values() for p in reference._parts(field.annotation)]
        todo += getattr(model, "PAYLOAD_PARTS", ())  # what a reply carries in its payload
    return found


def field_problems(doc: str) -> list[str]:
    """Fields in a model and not in the doc's reference, and the other way round."""
    problems, tables = [], documented_fields(doc)
    for name, model in all_models().items():
        base = model.__mro__[1]
        own = set(model.model_fields) - set(base.model_fields if issubclass(base, BaseModel) else {})
        listed = tables.pop(name, None)
        if listed is None:
            problems.append(f"{name}: no table in the doc's field reference")
            continue
        problems += [f"{name}.{field}: in the model, not in the doc" for field in sorted(own - listed)]
        problems += [f"{name}.{field}: in the doc, in no model" for field in sorted(listed - own)]
    return problems + [f"{name}: a table in the doc for no model" for name in tables]


def test_every_field_of_every_model_is_in_the_doc_and_every_field_in_the_doc_is_a_model_s():
    assert field_problems(DOC.read_text()) == []


def test_the_field_check_fails_on_a_field_missing_from_the_doc_or_made_up_in_it():
    doc = DOC.read_text()
    missing = doc.replace("| `for_s` |", "| `for_seconds` |", 1)
    assert field_problems(missing) == ["ProfileSet.for_s: in the model, not in the doc",
                                       "ProfileSet.for_seconds: in the doc, in no model"]


def test_the_field_reference_is_the_one_the_models_give():
    doc = DOC.read_text()
    assert reference.rewrite(doc) == doc, ("docs/protocol.md's field reference is not the models': run "
                                           "`python -m tcccd.wire.reference --write docs/protocol.md`")


def test_every_data_field_the_prose_names_is_a_field_of_some_model():
    prose = DOC.read_text().split(reference.BEGIN, 1)[0]
    fields = {name for model in all_models().values() for name in model.model_fields}
    named = set(re.findall(r"`[^`]*?(?<![\w-])data\.([a-z_]+)", prose))
    assert named and named - fields == set()


def _doc_error_codes() -> set[str]:
    rows = [line for line in _section("Errors").splitlines() if line.startswith("| `")]
    return {code for row in rows for code in re.findall(r"`([a-z_]+)`", row.split("|")[1])}


def _doc_request_types() -> set[str]:
    section = _section("Requests and replies") + _section("Live audio from the kit (capture)")
    rows = [line for line in section.splitlines() if re.match(r"\| `[a-z.]+`", line)]
    return {kind for row in rows for kind in re.findall(r"`([a-z.]+)`", row.split("|")[1])}


def test_every_error_code_in_the_doc_is_known_and_round_trips():
    documented = _doc_error_codes()
    assert documented == set(ERROR_CODES)
    for code in documented:
        error = Message("x", id="r1").error(code, f"what went wrong with {code}")
        back = Message.from_frames(error.to_frames())
        assert back == error and ErrorReply.from_message(back).code == code


def test_every_request_type_in_the_doc_is_validated_and_round_trips():
    examples = {"transcribe": {}, "stream": {}, "speak": {"text": "apply a tourniquet", "play": True},
                "speak.tokens": {"tokens": [10, 11, 12]}, "status": {}, "profile.get": {}, "ping": {},
                "profile.set": {"name": "field", "reason": "battery low", "for_s": 1800}, "cancel": {},
                "capture.mute": {}, "capture.unmute": {}, "transcripts.since": {"since_ts": 0, "after_seq": 3,
                                                                                "limit": 10},
                "card.get": {"casualty": 2, "mission": 1}, "card.confirm": {"event": "j12.3", "by": "tablet-2"},
                "card.reject": {"event": "j12.4"}, "card.close": {"by": "medic"},
                "card.send": {"casualty": 1, "by": "medic"}, "card.sends": {"mission": 1}}
    assert _doc_request_types() == set(examples) == set(REQUESTS)
    for kind, data in examples.items():
        message = Message(kind, data=data, final=True)
        back = Message.from_frames(message.to_frames())
        assert back == message and check_request(back) is None
