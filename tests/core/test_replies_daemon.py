"""A running daemon's own replies and events hold to the reply models (tcccd.wire.replies): every reply frame
is read raw (RawClient), every event as the client's subscription gets it.

Each frame is parsed by the envelope, then by the model of its type; a field the
daemon sends and no model declares (outside what plugins may add) fails, so what
the daemon says, the models and docs/protocol.md's field reference stay one.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tcccd.wire.client import Subscription
from tcccd.wire.model import undocumented
from tcccd.wire.protocol import Message
from tcccd.wire.replies import REPLIES, TranscriptsReply, read_reply
from tests.support.daemon import REPO, SLOW
from tests.support.rawclient import RawClient, header

UPS = REPO / "tests" / "data" / "telemetry" / "with-ups"
CAPACITY = "sys/class/power_supply/ups-battery/capacity"


def checked(message: Message) -> tuple[str, Any]:
    """(type, typed data) of one message; fails on a field no model declares."""
    typed = read_reply(message)
    assert typed is not None or message.type not in REPLIES
    if typed is not None:
        assert undocumented(typed) == [], (message.type, message.data)
    return message.type, typed


def drain(events: Subscription, until: Any, timeout_s: float = 20.0) -> list[tuple[str, Any]]:
    """Every event until `until(seen types)` holds; each checked against its model."""
    seen: list[tuple[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while not until({kind for kind, _ in seen}) and time.monotonic() < deadline:
        event = events.next(0.2)
        if event is not None:
            seen.append(checked(event[1]))
    return seen


@pytest.fixture
def host_root(tmp_path: Path) -> Path:
    root = tmp_path / "host"
    shutil.copytree(UPS, root)
    (root / CAPACITY).write_text("80\n")
    return root


ASKS = [header("ping", "ping", final=True), header("status", "status", final=True),
        header("profile.get", "get", final=True),
        header("profile.set", "set", final=True, data={"name": "emergency", "reason": "test", "for_s": 60}),
        header("profile.set", "unknown", final=True, data={"name": "nosuch"}),
        header("transcribe", "heard", final=True, audio={"encoding": "pcm_s16le"}),
        header("transcripts.since", "since", final=True, data={"after_seq": 0}),
        header("nope", "no-route", final=True), header("cancel", "nothing", final=True),
        header("status", "bad", final=True, data={"surprise": 1}), header("hang", "lost", final=True)]


def ask_everything(endpoint: str, slow_pid: int) -> dict[str, list[tuple[str, Any]]]:
    """Every reply to ASKS, by request id, each frame read raw and checked; `lost` loses its worker mid-request."""
    with RawClient(endpoint) as raw:
        for ask in ASKS:
            raw.send(ask, b"\0\0" * 1600 if ask["type"] == "transcribe" else None)
            if ask["type"] == "transcribe":  # journalled before transcripts.since asks for it
                raw.collect(until=lambda: raw.finals("heard"))
        time.sleep(0.5)
        os.kill(slow_pid, signal.SIGKILL)  # `lost` ends worker_lost, and an alert is published
        raw.collect(until=lambda: all(raw.finals(a["id"]) for a in ASKS))
    replies: dict[str, list[tuple[str, Any]]] = {}
    for frames in raw.frames:  # every frame that came back, in order
        message = Message.from_frames(frames)
        replies.setdefault(message.id, []).append(checked(message))
        if message.type == TranscriptsReply.TYPE:  # its transcripts travel in the payload, checked the same
            entries = TranscriptsReply.entries_of(message)
            assert all(undocumented(entry, "payload") == [] for entry in entries)
            replies[message.id].append(("payload", entries))
    return replies


def test_every_reply_and_event_of_a_running_daemon_validates(start_daemon, host_root):
    slow = {"name": "slow", "plugin": SLOW, "restart": {"backoff_initial_s": 0.1}}
    telemetry = {"backend": "sysfs", "interval_s": 0.2, "dwell_s": 0.5}
    daemon = start_daemon([{"name": "echo", "plugin": "passthrough"}, slow],
                          {"echo": ["echo"], "transcribe": ["slow"], "hang": ["slow"]},
                          env={"TCCCD_HOST_ROOT": str(host_root)}, telemetry=telemetry)
    slow_pid = next(s["pid"] for s in daemon.wait_healthy()["stages"] if s["name"] == "slow")
    with daemon.client() as listener:
        events = listener.subscribe()
        time.sleep(0.3)  # a SUB socket only hears what is published after it has joined
        (host_root / CAPACITY).write_text("15\n")  # the battery cap: a profile.decision, then a profile event
        seen = drain(events, until=lambda kinds: {"profile.decision", "profile"} <= kinds)
        replies = ask_everything(daemon.endpoint, slow_pid)
        seen += drain(events, until=lambda kinds: {"transcript", "alert"} <= kinds)
    assert {"profile.decision", "profile", "transcript", "alert"} <= {kind for kind, _ in seen}
    assert [kind for kind, _ in replies["ping"]] == ["pong"]
    assert replies["status"][0][1].state == "healthy"
    assert (replies["get"][0][1].name, replies["get"][0][1].requested) == ("training", "field")
    assert replies["set"][0][1].name == "emergency" and replies["set"][0][1].override_until is not None
    codes = {request_id: replies[request_id][-1][1].code for request_id in ("unknown", "no-route", "nothing", "bad",
                                                                            "lost")}
    assert codes == {"unknown": "bad_profile", "no-route": "no_route", "nothing": "bad_request",
                     "bad": "bad_message", "lost": "worker_lost"}
    assert replies["heard"][0][1].text == "3200 bytes heard" and replies["heard"][0][1].journal_seq is not None
    assert replies["since"][0][1].count == 1 and not replies["since"][0][1].more
    [entry] = replies["since"][1][1]
    assert entry.text == "3200 bytes heard" and entry.request_id == "heard"
    report = daemon.wait_for(lambda r: r["stages"][1]["state"] in ("ready", "degraded"))
    with daemon.client() as client:
        typed = client.status()
    assert undocumented(typed) == [] and typed.to_data().keys() == report.keys()
