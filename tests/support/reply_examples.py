"""One realistic `data` per reply type, every declared field set: what the round-trip and screen tests start from.

Shaped like what the daemon and tcccd's plugins send (see a running daemon's
replies, validated in tests/core/test_replies_daemon.py), so a test of a reader
reads what it will meet.
"""

from __future__ import annotations

import copy
from typing import Any

SEGMENT = {"start_s": 0.0, "end_s": 2.4, "text": "1 g TXA at 0915",
           "heard": "one gram of tea ex a at zero nine fifteen",
           "corrections": [{"heard": "tea ex a", "term": "TXA", "start_char": 12, "end_char": 20, "similarity": 0.86,
                            "audio_logprob_heard": -9.1, "audio_logprob_term": -7.4, "source": None}],
           "numbers": [{"heard": "one gram", "written": "1 g", "start_char": 0, "end_char": 8, "rule": "dose",
                        "reading": "one gram", "audio_logprob_heard": None, "audio_logprob_written": None,
                        "readings": None},
                       {"heard": "zero nine fifteen", "written": "0915", "start_char": 16, "end_char": 33,
                        "rule": "time", "reading": "zero nine fifteen", "audio_logprob_heard": None,
                        "audio_logprob_written": None, "readings": None}],
           "avg_logprob": -0.21, "no_speech_prob": 0.01,
           "considered": [{"kind": "vocabulary", "heard": "at zero", "proposed": "AVPU", "start_char": 21,
                           "end_char": 28, "audio_logprob_heard": -7.4, "audio_logprob_proposed": -25.0,
                           "reason": "the audio supports what was heard better"}],
           "words": [{"text": "TXA", "start_s": 1.1, "end_s": 1.5, "probability": 0.62, "start_char": 4,
                      "end_char": 7}],
           "uncertain": [{"text": "TXA", "start_char": 4, "end_char": 7, "probability": 0.22, "alternative": "TX",
                          "twin": None, "audio_logprob_heard": None, "audio_logprob_twin": None, "readings": None},
                         {"text": "0915", "start_char": 11, "end_char": 15, "probability": 0.71, "alternative": None,
                          "twin": "0950", "audio_logprob_heard": -6.2, "audio_logprob_twin": -7.0,
                          "readings": [{"text": "0915", "audio_logprob": -6.9, "source": "heard"},
                                       {"text": "0950", "audio_logprob": -7.0, "source": "twin"}]}]}
LOST = {"start_s": 2.0, "end_s": 2.0, "reason": "audio_lost", "chunks_missing": 3}
PROFILE = {"name": "training", "reason": "set by a client; battery 15% stayed <= 20% for 5 s", "since": 1.8e9,
           "requested": "field", "override_until": None, "cap": "training", "reading": "battery_percent", "value": 15.0}
LATENCY = {"p50_ms": 12.5, "p95_ms": 30.1, "p99_ms": 44.0, "count": 512}
CAPTURE_HEALTH = {"state": "degraded", "degraded_reason": "no microphone: unplugged", "plugin": "capture",
                  "last_error": None, "errors": 0, "latency": LATENCY,
                  "health_error": None, "capture": "no_device", "device": "default", "muted": False,
                  "no_device_reason": "unplugged", "device_name": None, "device_rate_hz": None, "speaker": None,
                  "rate_source": None, "input_level_dbfs": -90.0, "input_peak_dbfs": -90.0, "clipping": False,
                  "clipped_samples": 0, "overruns": 0, "reopens": 2, "recent_reopens": 0, "echo": "gate",
                  "playing": False, "gated_s": 0.0, "barge_ins": 0, "talk_overs": 0, "stream_id": None}
STAGE = {"name": "mic", "plugin": "capture", "worker": "mic", "state": "degraded", "pid": 4242, "restarts": 0,
         "queue_depth": 0, "max_queue": 16, "dropped_audio_chunks": 0, "busy_rejections": 0, "last_error": None,
         "latency": LATENCY, "rss_bytes": 60_000_000, "peak_rss_bytes": 70_000_000, "plugin_health": CAPTURE_HEALTH}
MEMORY = {"daemon_rss_bytes": 47_000_000, "total_rss_bytes": 107_000_000, "enabled": True,
          "budget_bytes": 4_000_000_000, "budget_source": "50% of 7620 MiB RAM", "used_bytes": 90_000_000,
          "headroom_bytes": 3_910_000_000, "daemon_bytes": 30_000_000, "over_budget": None, "refusing": None,
          "last_action": {"action": "release", "targets": ["mic"], "reason": "used 92% of the budget", "ts": 1.8e9,
                          "used_bytes": 3_700_000_000, "budget_bytes": 4_000_000_000},
          "workers": {"mic": {"pss_bytes": 60_000_000, "rss_bytes": 61_000_000, "gpu_bytes": None,
                              "used_bytes": 60_000_000, "share_bytes": 1_000_000_000, "loaded": True, "idle_s": 3.5,
                              "last_release": {"rss_before_bytes": 70_000_000, "rss_after_bytes": 61_000_000,
                                               "freed_bytes": 9_000_000, "malloc_trim": True, "errors": {}}}},
          "host": {"total_bytes": 8_000_000_000, "available_bytes": 5_000_000_000, "nvmap_used_bytes": None,
                   "pressure_some_avg10": 0.0, "pressure_full_avg10": 0.0,
                   "cgroup": {"version": 2, "current_bytes": 100_000_000, "limit_bytes": None,
                              "working_set_bytes": 90_000_000}}}
STATUS = {"version": "0.1.0", "pid": 4000, "uptime_s": 61.5, "state": "degraded", "profile": PROFILE,
          "stages": [STAGE], "requests_in_flight": 0, "memory": MEMORY,
          "endpoints": {"client": "tcp://127.0.0.1:7781", "events": "tcp://127.0.0.1:7782"},
          "counters": {"unreadable_messages": 0, "bad_messages": 1, "late_outputs": 0, "late_inputs": 0,
                       "undeliverable_replies": 0},
          "last_errors": [{"ts": 1.8e9, "request_id": "r1", "message": "worker asr: exited (SIGKILL)"}],
          "transcripts": {"path": "/var/lib/tcccd/transcripts.sqlite3", "state": "failing", "appends": 3,
                          "failures": 1, "last_error": "transcript not written: database or disk is full",
                          "size_bytes": 20480, "held_for_card": 0},
          "sources": {"source_chunks": 100, "source_chunks_not_routed": 2, "open_streams": 1},
          "wyoming": {"uri": "tcp://127.0.0.1:10300", "listening": True, "failure": None,
                      "transcript_streaming": False, "security": "loopback only", "connections_open": 0,
                      "connections_total": 1, "requests_open": 0,
                      "requests": {"transcribe": 1, "speak": 0, "describe": 1}, "errors": 0,
                      "cancelled_on_disconnect": 0, "refused_events": 0, "dropped_events": 0,
                      "refused_connections": 0},
          "card": {"enabled": True, "mission": 1, "casualty": 2, "casualties": [1, 2], "events": 14, "unconfirmed": 3,
                   "extracted": 9, "waiting": 0, "skipped": 0, "retries": 0, "readbacks": 8, "readback_errors": 1,
                   "readbacks_not_played": 0, "readback_waiting": 0,
                   "readback_last_error": "stage 'piper' is not ready", "clock_ahead_min": 675,
                   "clock_said_hhmm": "0912", "clock_read_hhmm": "2157", "clock_ahead_at": 1.8e9},
          "telemetry": {"battery_percent": 15.0, "battery_status": "Discharging", "mains_online": False,
                        "power_w": 7.5, "hottest_zone": "tj-thermal", "hottest_c": 61.0, "source": "sysfs",
                        "enabled": True, "read_at": 1.8e9, "problems": []},
          "power_mode": {"current": "15W", "requested": "7W", "state": "needs_reboot",
                         "detail": "7W changes the GPU's TPC mask: applies only at boot"},
          "tak": {"enabled": True, "destination": "tls://tak.example:8089", "connected": False,
                  "line": "tak: not connected to tls://tak.example:8089 (ConnectionRefusedError: refused); retry in "
                          "4 s; 1 queued", "error": "ConnectionRefusedError: refused", "queued": 1, "sent": 2,
                  "position_source": "gpsd", "position_age_s": 1.5, "position_problem": None,
                  "awaiting_confirmation": "nine line read back, waiting for 'send'"}}
SEND = {"seq": 3, "uid": "tcccd-kit.casevac.0b1f2d0e-5a3c-4e8e-9a57-7c1c2b9f1a31", "mission": 1, "casualties": [1, 2],
        "destination": "tls://tak.example:8089", "requested_ts": 1.8e9, "by": "medic", "via": "voice", "withheld": 2,
        "summary": "Nine line for casualties one and two: urgent one, priority one, litter one.", "state": "sent",
        "sent_ts": 1.8e9 + 0.2}
TRANSCRIPT = {"text": "1 g TXA at 0915", "segments": [SEGMENT], "duration_s": 9.5,
              "timings_ms": {"decode_audio_ms": 2.0, "total_ms": 900.0}, "backend": "ctranslate2",
              "dropped": [LOST], "partial": False, "utterance": 0, "start_s": 0.0, "end_s": 9.5,
              "utterances": [{"partial": False, "text": "1 g TXA at 0915", "utterance": 0, "start_s": 0.0,
                              "end_s": 9.5, "dropped": [LOST]}],
              "source": "client", "journal_seq": 7}
EXAMPLES: dict[str, dict[str, Any]] = {
    "pong": {},
    "status": STATUS,
    "profile": {**PROFILE, "available": ["emergency", "field", "training"]},
    "profile.decision": {"name": "training", "at": 1.8e9, "requested": "field", "effective": "training",
                         "reason": "battery 15% stayed <= 20% for 5 s", "cap": "training",
                         "reading": "battery_percent", "value": 15.0, "override_until": None,
                         "readings": {"battery_percent": 15.0, "hottest_c": None}},
    "transcript": TRANSCRIPT,
    "transcripts": {"count": 1, "last_seq": 7, "more": False, "media_type": "application/json"},
    "audio": {"sentence": 2, "frames": 28, "duration_s": 2.5, "sample_rate_hz": 22050, "sentences": 2,
              "first_audio_ms": 160.0},
    "capture": {"capture": "muted", "muted": True, "device": "default"},
    "alert": {"kind": "speech_dropped", "message": "speech from 5.0 s to 9.5 s of request r1 was not transcribed",
              "request_id": "r1", "start_s": 5.0, "end_s": 9.5, "reason": "decoding_loop"},
    "error": {"code": "busy", "message": "tcccd is over its memory budget and takes no new work", "reason": "memory"},
    "cards": {"casualties": [1, 2], "events": 27, "mission": 1, "current_mission": 2, "media_type": "application/json"},
    "card.closed": {"mission": 1, "through_journal_seq": 40, "casualties": [1, 2], "by": "medic", "ts": 1.8e9,
                    "media_type": "application/json"},
    "card.review": {"event": "j12.3", "action": "reject", "casualty": 2, "by": "medic", "ts": 1.8e9,
                    "media_type": "application/json"},
    "card": {"casualty": 2, "cause": "events", "changed": ["j12.3", "j12.4"], "journal_seq": 12, "mission": 2,
             "media_type": "application/json"},
    "card.send": {**SEND, "position_source": "gpsd", "link": "tak: connected to tls://tak.example:8089 since "
                                                             "09:15:02; 0 queued"},
    "card.sends": {"sends": [SEND], "link": "tak: connected to tls://tak.example:8089 since 09:15:02; 0 queued"},
}


def example(kind: str) -> dict[str, Any]:
    """A fresh copy of the example `data` of reply type `kind` (tests may change it)."""
    return copy.deepcopy(EXAMPLES[kind])

ALERTS = {  # one example of each alert kind, every field set
    "journal_full": {"kind": "journal_full", "message": "TRANSCRIPT NOT RECORDED: disk full", "request_id": "r1"},
    "speech_dropped": EXAMPLES["alert"],
    "card_skipped": {"kind": "card_skipped", "message": "CARD: transcript 3 is not on the card", "request_id": "r3",
                     "reason": "the card stage refused it (bad_message)"},
    "clock_mismatch": {"kind": "clock_mismatch", "message": "CLOCK: the medic said 0912 for an act said as done when "
                       "the kit's clock read 2157", "request_id": "r4", "said_hhmm": "0912", "clock_hhmm": "2157",
                       "ahead_min": 675},
    "talk_over": {"kind": "talk_over", "message": "the medic spoke over the kit's read-back (mic)", "worker": "mic"},
    "worker_lost": {"kind": "worker_lost", "message": "worker asr: killed by signal SIGKILL", "worker": "asr"},
    "stage_degraded": {"kind": "stage_degraded", "message": "stage mic is degraded: no microphone", "worker": "mic",
                       "reason": "no microphone: no audio device named 'default'"},
    "stage_recovered": {"kind": "stage_recovered", "message": "stage mic works again", "worker": "mic",
                        "reason": "no microphone: no audio device named 'default'"},
    "memory": {"kind": "memory", "message": "memory capper: release asr: over budget", "action": "release",
               "targets": ["asr"], "reason": "over budget", "ts": 1.8e9, "used_bytes": 1, "budget_bytes": 2},
}
