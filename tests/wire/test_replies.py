"""The reply models: every type survives the wire, refuses what breaks its promise, and keeps what plugins add."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from tcccd.wire.alerts import KINDS, Alert
from tcccd.wire.errors import ERROR_CODES, ErrorReply
from tcccd.wire.model import ReplyInvalid, undocumented
from tcccd.wire.protocol import Message
from tcccd.wire.replies import REPLIES, Transcript, read_reply
from tcccd.wire.status import CaptureHealth, StatusReport, read_plugin_health
from tests.support.reply_examples import ALERTS, EXAMPLES, example


def unset(model: BaseModel, path: str = "data") -> list[str]:
    """Declared fields an example leaves out, at any depth: the round trip would not cover them."""
    missing = [f"{path}.{name}" for name in type(model).model_fields if name not in model.model_fields_set]
    for name in model.model_fields_set:
        value = getattr(model, name)
        items = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else [value]
        missing += [p for item in items if isinstance(item, BaseModel) for p in unset(item, f"{path}.{name}")]
    return missing


def test_there_is_an_example_for_every_reply_type_and_it_sets_every_field():
    assert set(EXAMPLES) == set(REPLIES)
    for kind, model in REPLIES.items():
        assert unset(model.from_data(example(kind))) == [], kind
    assert unset(CaptureHealth.from_data(example("status")["stages"][0]["plugin_health"])) == []


@pytest.mark.parametrize("kind", sorted(REPLIES))
def test_every_reply_type_survives_the_wire(kind):
    request = Message("whatever", id="r1", stream="s")
    model = REPLIES[kind].from_data(example(kind))
    sent = model.answer(request, final=kind != "audio")
    back = Message.from_frames(sent.to_frames())
    assert back.type == kind and back.id == "r1" and back.stream == "s"
    assert back.data == example(kind)  # what was set is what arrives: nothing added, nothing lost
    typed = read_reply(back)
    assert typed.to_data() == example(kind) and undocumented(typed) == []


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_alert_kind_has_its_model_and_survives_the_wire(kind):
    assert set(ALERTS) == set(KINDS)
    sent = Message.event(KINDS[kind].from_data(ALERTS[kind]))
    typed = read_reply(Message.from_frames(sent.to_frames()))
    assert type(typed) is KINDS[kind] and typed.to_data() == ALERTS[kind]
    assert unset(typed) == [] and undocumented(typed) == []


def test_an_alert_of_a_kind_this_version_does_not_know_is_still_read():
    typed = read_reply(Message("alert", data={"kind": "gps_lost", "message": "no fix", "satellites": 0}))
    assert type(typed) is Alert and typed.kind == "gps_lost" and typed.model_extra == {"satellites": 0}
    with pytest.raises(ReplyInvalid, match="alert of kind 'talk_over'.*worker"):
        read_reply(Message("alert", data={"kind": "talk_over", "message": "?"}))


def test_absent_fields_stay_absent_on_the_wire():
    assert Transcript(text="casualty two").to_data() == {"text": "casualty two"}
    assert ErrorReply.from_data({"code": "busy", "message": "full"}).to_data() == {"code": "busy", "message": "full"}


def test_a_segment_keeps_the_keys_a_plugin_adds():
    data = example("transcript")
    data["segments"][0] |= {"tokens": [[50364, 314]], "engine": {"beam": 5}}
    data["engine_note"] = "a plugin's own key"
    transcript = Transcript.from_data(data)
    assert transcript.segments[0].model_extra["tokens"] == [[50364, 314]]
    assert transcript.to_data() == data and undocumented(transcript) == []


def test_a_key_tcccd_itself_does_not_declare_is_accepted_but_reported():
    data = example("status")
    data["surprise"] = 1
    data["stages"][0]["queue_seconds"] = 2.0
    data["stages"][0]["plugin_health"]["model"] = "tiny.en"  # a plugin's own fact: not reported
    report = StatusReport.from_data(data)
    assert undocumented(report) == ["data.surprise", "data.stages[].queue_seconds"]
    assert report.stages[0].plugin_health.fact("model") == "tiny.en"
    assert report.stages[0].plugin_health.fact("voice") is None


def test_a_reply_that_breaks_its_promise_says_which_field_and_what_is_accepted():
    bad = example("status")
    bad["stages"][0]["restarts"] = "three"
    with pytest.raises(ReplyInvalid, match=r"data\.stages\[0\]\.restarts: expected an integer, got 'three'"):
        StatusReport.from_data(bad)
    bad = example("status")
    del bad["profile"]["since"]
    with pytest.raises(ReplyInvalid, match=r"data\.profile\.since: required key is missing"):
        StatusReport.from_data(bad)
    with pytest.raises(ReplyInvalid, match="expected a 'status' reply, got 'pong'"):
        StatusReport.from_message(Message("pong"))


def test_an_error_code_outside_the_documented_list_is_refused_where_it_is_made():
    with pytest.raises(ReplyInvalid, match="'oops' is not a documented error code"):
        Message("x").error("oops", "something")
    for code in ERROR_CODES:
        assert ErrorReply.from_message(Message("x").error(code, "what went wrong")).code == code
    assert Message("x").error("busy", "over budget", reason="memory").data["reason"] == "memory"


def test_a_custom_stage_type_has_no_reply_model():
    assert read_reply(Message("echo", data={"n": 1})) is None


def test_a_stage_health_is_read_as_its_plugins_model_and_a_broken_one_says_why():
    capture = read_plugin_health({"plugin": "capture", "state": "degraded", "capture": "no_device",
                                  "degraded_reason": "no microphone", "talk_overs": 2, "model": "x"})
    assert isinstance(capture, CaptureHealth) and capture.talk_overs == 2 and capture.fact("model") == "x"
    assert capture.to_data()["degraded_reason"] == "no microphone"
    other = read_plugin_health({"plugin": "whisper", "backend": "onnxruntime"})
    assert type(other).__name__ == "PluginHealth" and other.fact("backend") == "onnxruntime"
    broken = read_plugin_health({"plugin": "capture", "talk_overs": "many"})
    assert broken.state is None and "plugin_health.talk_overs" in (broken.health_error or "")
