"""Ten thousand random and mutated messages to a live daemon: it stays up and owes nobody a final reply."""

from __future__ import annotations

from tcccd.wire.errors import ERROR_CODES, ErrorReply
from tcccd.wire.model import undocumented
from tcccd.wire.protocol import Message
from tcccd.wire.replies import read_reply
from tests.support.fuzz import cases
from tests.support.rawclient import RawClient

FUZZ_MESSAGES = 10_000


def test_fuzzed_messages_never_crash_the_daemon_and_get_exactly_one_final(start_daemon):
    daemon = start_daemon([{"name": "echo", "plugin": "passthrough", "max_queue": 256}],
                          {"echo": ["echo"], "stream": ["echo"]}, stream_idle_timeout_s=1.0)
    daemon.wait_healthy()
    owed: set[str] = set()
    sent = 0
    with RawClient(daemon.endpoint) as raw:
        for case in cases(FUZZ_MESSAGES):
            for frames in case.frames:
                raw.send_frames(frames)
                sent += 1
            if case.owed:
                owed.add(case.request_id)
            if sent % 500 < len(case.frames):
                raw.collect(quiet_s=0.0)  # keep up with the replies; the daemon is not starved of reads
            if sent >= FUZZ_MESSAGES:
                break
        raw.collect(quiet_s=2.0, until=lambda: all(raw.finals(i) for i in owed), timeout_s=120)
    missing = [i for i in owed if not raw.finals(i)]
    doubled = {i: len(raw.finals(i)) for i in raw.replies if len(raw.finals(i)) > 1}
    assert not missing, f"{len(missing)} owed requests got no final reply, e.g. {missing[:5]}"
    assert not doubled, f"requests with several final replies: {list(doubled.items())[:5]}"
    typed = [read_reply(Message.from_frames(frames)) for frames in raw.frames]  # every reply holds to its model
    assert [undocumented(reply) for reply in typed if reply is not None and undocumented(reply)] == []
    codes = {reply.code for reply in typed if isinstance(reply, ErrorReply)}
    assert {"bad_message", "no_route", "stream_idle"} <= codes <= set(ERROR_CODES)
    assert len(owed) > FUZZ_MESSAGES // 2
    report = daemon.wait_healthy()
    assert report["requests_in_flight"] == 0
    assert report["counters"]["unreadable_messages"] > 0 and report["counters"]["bad_messages"] > 0
    assert report["stages"][0]["restarts"] == 0
    with daemon.client() as client:
        assert client.call("echo", payload=b"still here").payload == b"still here"
