"""tcccd's own plugins through a running daemon: every transcript, audio and capture reply, read raw, holds to
its model (tcccd.wire.replies), and so does the capture stage's health to CaptureHealth."""

from __future__ import annotations

import numpy as np
import soundfile

from tcccd.wire.model import undocumented
from tcccd.wire.protocol import AudioFormat, Message
from tcccd.wire.replies import AudioReply, CaptureReply, Transcript, read_reply
from tcccd.wire.status import CaptureHealth, StatusReport
from tests.support.daemon import REPO
from tests.support.rawclient import RawClient, header

SAMPLE = REPO / "tests" / "data" / "espeak-samples" / "medevac.wav"
PIPELINE = [{"name": "asr", "plugin": "whisper", "max_queue": 512, "params": {"backend": "torch", "beam_size": 1}},
            {"name": "piper", "plugin": "piper"},
            {"name": "mic", "plugin": "capture", "params": {"device": "no-such-device", "retry_initial_s": 5.0}}]
ROUTES = {"transcribe": ["asr"], "stream": ["asr"], "speak": ["piper"], "capture.mute": ["mic"],
          "capture.unmute": ["mic"]}


def stream_messages(request_id: str) -> list[tuple[dict, bytes]]:
    """The sample as live audio in 100 ms chunks, then a second of silence (the utterance ends) and the close."""
    audio, rate_hz = soundfile.read(SAMPLE, dtype="int16", always_2d=True)
    pcm = np.concatenate([audio[:, 0], np.zeros(rate_hz, dtype=np.int16)]).tobytes()
    fmt = AudioFormat("pcm_s16le", rate_hz, 1).to_dict()
    step = rate_hz // 10 * 2
    chunks = [(header("stream", request_id, seq=n, audio=fmt), pcm[i:i + step])
              for n, i in enumerate(range(0, len(pcm), step))]
    return [*chunks, (header("stream", request_id, seq=len(chunks), final=True), b"")]


def test_whisper_piper_and_capture_replies_hold_to_their_models(start_daemon):
    daemon = start_daemon(PIPELINE, ROUTES)
    # a capture stage without its device is degraded, and so is the daemon: the other stages serve
    daemon.wait_for(lambda r: r["state"] == "degraded" and all(s["state"] == "ready" for s in r["stages"]
                                                               if s["name"] != "mic"), timeout_s=240)
    with RawClient(daemon.endpoint) as raw:
        raw.send(header("transcribe", "file", final=True, audio={"encoding": "wav"}), SAMPLE.read_bytes())
        raw.send(header("speak", "said", final=True, data={"text": "Tourniquet applied. Casualty two."}))
        raw.send(header("capture.mute", "mute", final=True))
        raw.send(header("capture.unmute", "unmute", final=True))
        for head, pcm in stream_messages("live"):
            raw.send(head, pcm)
        raw.collect(until=lambda: all(raw.finals(i) for i in ("file", "said", "mute", "unmute", "live")),
                    timeout_s=180)
    typed: dict[str, list] = {}
    for frames in raw.frames:
        message = Message.from_frames(frames)
        reply = read_reply(message)
        assert reply is not None and undocumented(reply) == [], message
        typed.setdefault(message.id, []).append(reply)
    [heard] = typed["file"]
    assert isinstance(heard, Transcript) and "medevac" in heard.text.lower() and heard.journal_seq is not None
    assert heard.segments and all(s.heard and s.corrections is not None for s in heard.segments)
    assert all(isinstance(r, AudioReply) for r in typed["said"]) and typed["said"][-1].duration_s > 0.5
    assert [r.muted for r in typed["mute"] + typed["unmute"]] == [True, False]
    assert all(isinstance(r, CaptureReply) for r in typed["mute"])
    live = typed["live"]
    assert any(r.partial is False and r.segments for r in live)  # partials, when one lands, were typed above
    assert "medevac" in live[-1].text.lower() and live[-1].utterances

    with daemon.client() as client:
        report: StatusReport = client.status()
    mic = next(s for s in report.stages if s.name == "mic").plugin_health
    health = CaptureHealth.from_data(mic.to_data())
    assert health.capture == "no_device" and health.no_device_reason
    assert not health.model_extra, f"capture health keys no model declares: {sorted(health.model_extra)}"
