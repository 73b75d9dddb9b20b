"""Live streams: no total deadline, flat memory, and ended ids that stay ended."""

from __future__ import annotations

import time

from tests.support.rawclient import RawClient, header

DICTATION = [{"name": "dict", "plugin": "tests.support.stage_plugins:Dictation", "max_queue": 64,
              "params": {"utterance_s": 5.0}}]
PCM = {"encoding": "pcm_s16le", "sample_rate_hz": 16000, "channels": 1}
HALF_SECOND = b"\0\1" * 8000


def _rss(report: dict) -> tuple[int, int]:
    return report["memory"]["daemon_rss_bytes"], report["stages"][0]["rss_bytes"]


def test_ten_minutes_of_dictation_outlive_the_deadline_with_flat_memory(start_daemon):
    daemon = start_daemon(DICTATION, {"stream": ["dict"]}, default_deadline_s=1.0, stream_idle_timeout_s=5.0)
    daemon.wait_healthy()
    chunks = 1200  # 10 minutes in half-second chunks
    started = time.monotonic()
    with RawClient(daemon.endpoint) as raw, daemon.client() as client:
        for seq in range(chunks):
            raw.send(header("stream", "dictation", seq=seq, audio=PCM), HALF_SECOND)
            time.sleep(0.003)  # accelerated (about 150x real time) yet longer than the 1 s default deadline
            if seq % 100 == 0:
                raw.collect(quiet_s=0.0)
            if seq == chunks // 10:
                early = _rss(client.status().to_data())
        raw.send(header("stream", "dictation", seq=chunks, final=True), b"")
        raw.collect(until=lambda: raw.finals("dictation"))
        late = _rss(client.status().to_data())
    assert time.monotonic() - started > 1.0
    final = raw.final("dictation")
    assert final["type"] == "transcript" and final["data"]["heard_s"] == 600.0
    assert final["data"]["streams_held"] == 0
    utterances = [r for r in raw.replies["dictation"] if not r.get("final")]
    assert [r["data"]["end_s"] for r in utterances] == [5.0 * k for k in range(1, 121)]
    growth_mib = [(b - a) / 2**20 for a, b in zip(early, late, strict=True)]
    assert max(growth_mib) < 8, f"RSS grew {growth_mib} MiB over 9 minutes of audio (19 MB passed through)"


def test_late_chunks_after_a_stream_ended_open_nothing_and_get_no_second_final(start_daemon):
    daemon = start_daemon(DICTATION, {"stream": ["dict"]}, stream_idle_timeout_s=0.5, drain_timeout_s=60)
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("stream", "idle", audio=PCM), HALF_SECOND)
        raw.collect(until=lambda: raw.finals("idle"))
        assert raw.final("idle")["data"]["code"] == "stream_idle"
        raw.send(header("stream", "closed", audio=PCM), HALF_SECOND)
        raw.send(header("stream", "closed", seq=1, final=True), b"")
        raw.collect(until=lambda: raw.finals("closed"))
        for request_id in ("idle", "closed"):
            for seq in range(5, 9):
                raw.send(header("stream", request_id, seq=seq, audio=PCM), HALF_SECOND)
            raw.send(header("stream", request_id, seq=9, final=True), b"")
        raw.collect(quiet_s=1.0)
    for request_id in ("idle", "closed"):
        raw.final(request_id)  # still exactly one
        notices = [r for r in raw.replies[request_id] if not r.get("final")]
        assert [n["data"]["code"] for n in notices] == ["bad_request"]
        assert "already ended" in notices[0]["data"]["message"]
    report = daemon.wait_healthy()
    assert report["requests_in_flight"] == 0 and report["counters"]["late_inputs"] == 10
    daemon.proc.terminate()
    assert daemon.proc.wait(15) == 0  # no phantom request to wait the 60 s drain for


def test_cancel_ends_a_stream_and_the_stage_forgets_it(start_daemon):
    daemon = start_daemon(DICTATION, {"stream": ["dict"]})
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw, daemon.client() as client:
        raw.send(header("stream", "s1", audio=PCM), HALF_SECOND)
        raw.send(header("cancel", "s1", final=True))
        raw.collect(until=lambda: raw.finals("s1"))
        assert raw.final("s1")["data"]["code"] == "cancelled"
        report = daemon.wait_for(lambda r: r["stages"][0]["plugin_health"].get("streams_held") == 0)
        raw.send(header("cancel", "nothing-open", final=True))
        raw.collect(until=lambda: raw.finals("nothing-open"))
        assert raw.final("nothing-open")["data"]["code"] == "bad_request"
        assert client.status().requests_in_flight == 0
    assert report["state"] == "healthy"


def test_stream_caps_answer_busy_and_the_open_stream_goes_on(start_daemon):
    daemon = start_daemon(DICTATION, {"stream": ["dict"]}, max_open_streams_per_client=1)
    daemon.wait_healthy()
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("stream", "first", audio=PCM), HALF_SECOND)
        raw.send(header("stream", "second", audio=PCM), HALF_SECOND)
        raw.collect(until=lambda: raw.finals("second"))
        second = raw.final("second")
        assert second["data"]["code"] == "busy" and "max_open_streams_per_client=1" in second["data"]["message"]
        raw.send(header("stream", "first", seq=1, final=True), b"")
        raw.collect(until=lambda: raw.finals("first"))
    assert raw.final("first")["data"]["heard_s"] == 0.5
