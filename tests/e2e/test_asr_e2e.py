"""Speech recognition as a client sees it: files through the CLI, live audio through a stream."""

from __future__ import annotations

import json
import time

import numpy as np
import soundfile

from tcccd.wire.protocol import AudioFormat
from tests.support.daemon import REPO
from tests.support.speech import two_sentences

SAMPLE = REPO / "tests" / "data" / "espeak-samples" / "medevac.wav"


def test_transcribe_file_and_live_stream_through_the_daemon(start_daemon, tmp_path):
    asr = {"name": "asr", "plugin": "whisper", "max_queue": 512, "params": {"backend": "torch", "beam_size": 1}}
    daemon = start_daemon([asr], {"transcribe": ["asr"], "stream": ["asr"]})
    daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=180)

    result = daemon.cli("transcribe", "--json", str(SAMPLE))
    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    assert "medevac" in reply["text"].lower() and reply["segments"]
    with daemon.client(timeout_s=30) as client:
        [entry] = [e.to_data() for e in client.transcripts_since()]
    assert entry["text"] == reply["text"] and entry["segments"] == reply["segments"]
    assert all({"heard", "corrections", "numbers"} <= set(s) for s in entry["segments"]), "the journal lost the trail"

    silence = tmp_path / "silence.wav"
    soundfile.write(silence, np.zeros(5 * 16000, dtype=np.float32), 16000)
    assert json.loads(daemon.cli("transcribe", "--json", str(silence)).stdout)["text"] == ""

    audio, rate_hz = soundfile.read(SAMPLE, dtype="int16", always_2d=True)
    speech = two_sentences(audio[:, 0], rate_hz)
    pcm = np.concatenate([speech, np.zeros(rate_hz, dtype=np.int16)]).tobytes()  # speech, then a pause
    chunk = rate_hz // 10 * 2
    with daemon.client(timeout_s=60) as client:
        stream = client.stream(AudioFormat("pcm_s16le", rate_hz, 1))
        replies = []
        for i in range(0, len(pcm), chunk):
            replies += stream.send(pcm[i:i + chunk])
            time.sleep(0.1)  # live audio at real-time pace: partials decode beside it, every 500 ms or slower
        replies += stream.finish()
        health = next(s for s in client.call("status").data["stages"] if s["name"] == "asr")["plugin_health"]
    partials = [m for m in replies if m.data.get("partial")]
    utterances = [m for m in replies if m.data.get("partial") is False and not m.final]
    # Partials decode beside the stream and never hold up its final: one was started while the utterance went on,
    # and one landed unless the machine could not finish it before the utterance ended (then it was abandoned).
    assert health["partials_done"] + health["partials_abandoned"] >= 1, health
    assert partials or health["partials_abandoned"] >= 1, "no partial transcript while the utterance went on"
    assert all(not m.final and m.data["utterance"] == 0 for m in partials)
    assert len(utterances) == 1 and "medevac" in utterances[0].data["text"].lower()
    assert replies[-1].final and "medevac" in replies[-1].data["text"].lower()
    assert not [m for m in replies if m.type == "error"], "live audio was dropped"


def test_speech_heard_only_as_a_loop_raises_an_alert_and_is_not_in_the_record(start_daemon, tmp_path):
    """Every frame read raw: one final transcript without the loop, its 'dropped' span, and an alert event."""
    import subprocess

    import zmq

    from tests.support.rawclient import RawClient, header

    asr = {"name": "asr", "plugin": "whisper", "params": {"backend": "torch", "beam_size": 5}}
    daemon = start_daemon([asr], {"transcribe": ["asr"]})
    report = daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=180)
    wav = tmp_path / "twenty.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-w", str(wav),
                    "twenty. twenty. twenty. twenty. twenty. twenty."], check=True)
    events = zmq.Context.instance().socket(zmq.SUB)
    events.setsockopt(zmq.SUBSCRIBE, b"alert")
    events.setsockopt(zmq.LINGER, 0)
    events.connect(report["endpoints"]["events"])
    time.sleep(0.3)  # a SUB socket only hears what is published after it has joined
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("transcribe", "loop-1", final=True, audio={"encoding": "wav"}), wav.read_bytes())
        raw.collect(until=lambda: raw.finals("loop-1"), timeout_s=120)
        final = raw.final("loop-1")
    assert final["type"] == "transcript" and final["data"]["text"] == ""
    [span] = final["data"]["dropped"]
    assert span["reason"] == "decoding_loop"
    assert events.poll(10_000), "no alert event for the dropped speech"
    topic, head, *_ = events.recv_multipart()
    alert = json.loads(head)
    assert topic == b"alert" and alert["data"]["kind"] == "speech_dropped"
    assert alert["data"]["request_id"] == "loop-1" and alert["data"]["end_s"] == span["end_s"]
    events.close(0)
    stages = daemon.wait_for(lambda r: True)["stages"]
    assert next(s for s in stages if s["name"] == "asr")["plugin_health"]["dropped_loops"] == 1


def test_a_stream_chunk_that_never_came_is_listed_with_its_utterance_and_raises_an_alert(start_daemon):
    """Every frame read raw: a client's stream skips one seq in the middle of its speech (as the daemon's own drop of
    a chunk a stage had no room for does); the utterance's reply lists the audio lost, and an alert says so."""
    import zmq

    from tests.support.rawclient import RawClient, header

    asr = {"name": "asr", "plugin": "whisper", "max_queue": 512, "params": {"backend": "torch", "beam_size": 1}}
    daemon = start_daemon([asr], {"stream": ["asr"]})  # room for every chunk sent at once: the daemon drops none
    report = daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=180)
    events = zmq.Context.instance().socket(zmq.SUB)
    events.setsockopt(zmq.SUBSCRIBE, b"alert")
    events.setsockopt(zmq.LINGER, 0)
    events.connect(report["endpoints"]["events"])
    time.sleep(0.3)  # a SUB socket only hears what is published after it has joined
    audio, rate_hz = soundfile.read(SAMPLE, dtype="int16", always_2d=True)
    pcm = np.concatenate([audio[:, 0], np.zeros(rate_hz, dtype=np.int16)]).tobytes()
    step = rate_hz // 10 * 2  # 100 ms
    chunks = [pcm[i:i + step] for i in range(0, len(pcm), step)]
    fmt = AudioFormat("pcm_s16le", rate_hz, 1).to_dict()
    with RawClient(daemon.endpoint) as raw:
        for seq, chunk in enumerate(chunks):
            if seq != 8:  # 0.8 s in: inside the speech
                raw.send(header("stream", "gap-1", seq=seq, audio=fmt), chunk)
        raw.send(header("stream", "gap-1", seq=len(chunks), final=True))
        raw.collect(until=lambda: raw.finals("gap-1"), timeout_s=120)
        replies = raw.replies["gap-1"]
    [utterance] = [r for r in replies if r["data"].get("partial") is False and not r.get("final")]
    [lost] = utterance["data"]["dropped"]
    assert lost["reason"] == "audio_lost" and lost["chunks_missing"] == 1, utterance["data"]
    assert abs(lost["start_s"] - 0.8) < 0.05  # at 16 kHz after the resampler's own delay
    assert events.poll(10_000), "no alert event for the audio lost"
    topic, head, *_ = events.recv_multipart()
    alert = json.loads(head)["data"]
    assert topic == b"alert" and alert["kind"] == "speech_dropped" and alert["reason"] == "audio_lost"
    assert "never reached the recogniser" in alert["message"], alert
    events.close(0)
