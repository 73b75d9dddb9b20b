"""Property tests of the envelope parser: whatever a peer sends, the result is a Message or a ProtocolError."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcccd.wire import messages
from tcccd.wire.protocol import ID_PATTERN, MAX_NESTING, AudioFormat, Message, ProtocolError

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
finite_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
ids = st.from_regex(ID_PATTERN, fullmatch=True)
types = st.from_regex(r"^[a-z][a-z0-9_.-]{0,20}$", fullmatch=True)
HEADER_KEYS = ("v", "type", "id", "seq", "ts", "final", "deadline_s", "stream", "stage", "audio", "data")


def parse(frames: list[bytes]) -> Message | ProtocolError:
    try:
        return Message.from_frames(frames)
    except ProtocolError as exc:
        return exc


@given(st.lists(st.binary(max_size=200), min_size=0, max_size=4))
def test_any_bytes_give_a_message_or_a_protocol_error(frames):
    assert isinstance(parse(frames), (Message, ProtocolError))


@given(json_values)
def test_any_json_gives_a_message_or_a_protocol_error(value):
    result = parse([json.dumps(value).encode()])
    assert isinstance(result, (Message, ProtocolError))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(ids, types, st.sampled_from(HEADER_KEYS), json_values)
def test_a_mutated_field_is_refused_under_the_readable_id_or_yields_a_valid_message(request_id, kind, key, value):
    header = {"v": 1, "type": kind, "id": request_id, "seq": 0, "final": True, key: value}
    result = parse([json.dumps(header).encode()])
    if isinstance(result, ProtocolError):
        expected_id = header["id"] if isinstance(header["id"], str) and re.fullmatch(ID_PATTERN, header["id"]) \
            else None
        assert result.request_id == expected_id
        assert str(result)  # says what was wrong
    else:
        assert isinstance(result.seq, int) and not isinstance(result.seq, bool) and result.seq >= 0
        assert result.final is True or result.final is False
        assert result.deadline_s is None or 0 < result.deadline_s < float("inf")
        assert result.ts == result.ts and abs(result.ts) != float("inf")  # finite, not NaN
        assert isinstance(result.data, dict)


@given(ids, types, st.integers(0, 2**53), st.booleans(), st.none() | st.floats(0.001, 86400),
       st.none() | st.sampled_from([AudioFormat(), AudioFormat("wav"), AudioFormat("pcm_f32le", 48000, 2)]),
       st.dictionaries(st.text(max_size=8), finite_scalars, max_size=3),
       st.none() | st.binary(max_size=64))
def test_valid_messages_survive_the_round_trip(request_id, kind, seq, final, deadline_s, audio, data, payload):
    message = Message(kind, id=request_id, seq=seq, final=final, deadline_s=deadline_s, audio=audio, data=data,
                      payload=payload)
    assert Message.from_frames(message.to_frames()) == message


@given(st.integers(MAX_NESTING + 1, 30_000))
def test_deep_nesting_is_refused_before_parsing(depth):
    header = '{"v":1,"type":"x","id":"a","data":{"k":' + "[" * depth + "]" * depth + "}}"
    result = parse([header.encode()])
    assert isinstance(result, ProtocolError) and "nested" in str(result)


def test_non_numbers_and_non_booleans_are_refused_with_the_id():
    for key, value in (("seq", "x"), ("ts", None), ("deadline_s", "inf"), ("final", 1), ("deadline_s", -1)):
        result = parse([json.dumps({"v": 1, "type": "echo", "id": "abc", key: value}).encode()])
        assert isinstance(result, ProtocolError) and result.request_id == "abc" and f"header.{key}" in str(result)
    for text in ("NaN", "Infinity", "-Infinity"):
        result = parse([b'{"v":1,"type":"echo","id":"abc","deadline_s":' + text.encode() + b'}'])
        assert isinstance(result, ProtocolError)


def test_request_data_is_checked_per_type():
    refused = [Message("speak", data={}, final=True), Message("speak", data={"text": 5}, final=True),
               Message("profile.set", data={"name": "../field"}, final=True),
               Message("profile.set", data={"name": "/etc/passwd"}, final=True),
               Message("speak.tokens", data={"prompt": "hi", "completions_url": "http://evil"}, final=True),
               Message("status", data={"surprise": 1}, final=True)]
    for message in refused:
        problem = messages.check_request(message)
        assert problem and problem.startswith("data"), (message, problem)
