"""bench/card.py's audio part: the scenarios spoken by the kit's Piper voice at two paces through a running daemon.

One daemon (Whisper tiny.en, torch, beam 1; the card stage; Piper; the capture stage on a virtual microphone, so
the read-back plays as it would on a kit) hears every utterance through `transcribe`, in scenario order, one at a
time with a pause for the read-back as a medic would leave. Measured from outside, on one SUB socket: the time
from the `transcript` event to the `card` event of the same journal entry (p50/p99); from the daemon's log:
its own card update time and the read-back's first audio after the card update (the first audio chunk handed to
the speaker). Fields: the daemon's transcripts (what Whisper wrote, with their audit trail, from the replies)
are put through the card stage with the scenario's clock times, as the text part does, because the daemon stamps
utterances with today's clock and the expected cards use the scenario's (their unspoken-time columns, their
relative times); the same daemon's own live card is checked for invented fields in tests/e2e/test_card_e2e.py.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tcccd.plugins.capture.virtual_mic import pulse_available, running_pulse
from tcccd.wire.card_stage import CardEvents
from tests.support.card_audio import scenario_audio
from tests.support.card_fields import fields
from tests.support.card_scenarios import CardPipeline, Scenario
from tests.support.daemon import DaemonProcess, make_config

ASR = {"name": "asr", "plugin": "whisper", "max_queue": 512, "params": {"backend": "torch", "beam_size": 1}}
STAGES = [ASR, {"name": "card", "plugin": "card"}, {"name": "piper", "plugin": "piper"}]
ROUTES = {"transcribe": ["asr"], "card.extract": ["card"], "speak.play": ["piper", "mic"]}
MIC = {"name": "mic", "plugin": "capture", "params": {"latency_ms": 100}}
PAUSE_S = 2.5  # between utterances: the read-back plays, as a medic would wait for it


@dataclass
class AudioRun:
    got: dict[str, set[str]] = field(default_factory=dict)  # scenario -> card fields
    heard: dict[str, list[str]] = field(default_factory=dict)
    update_ms: list[float] = field(default_factory=list)  # transcript event -> card event, seen by a subscriber
    daemon_update_ms: list[float] = field(default_factory=list)
    readback_ms: list[float] = field(default_factory=list)


def replay(scenario: Scenario, transcripts: list[dict], workdir: Path) -> set[str]:
    """The daemon's transcripts through the card stage with the scenario's clock times."""
    with CardPipeline(workdir) as pipeline:
        for utterance, transcript in zip(scenario.utterances, transcripts, strict=True):
            segments = transcript.get("segments") or [{"text": transcript["text"]}]
            message = pipeline.request(segments[0], scenario.clock(utterance), scenario.utc_offset_min)
            message.data.update(text=transcript["text"], segments=segments)
            [reply] = pipeline.harness.request(message)
            for event in pipeline.log.append(CardEvents.model_validate(reply.data).events):
                pipeline.projector.apply(event)
            pipeline.casualty = reply.data["casualty"]
        return fields(pipeline.projector.cards())


def _speak(daemon: DaemonProcess, scenario: Scenario, wavs: list[bytes], run: AudioRun, key: str) -> list[dict]:
    transcripts = []
    with daemon.client(timeout_s=120) as client:
        subscription = client.subscribe(("transcript", "card"))
        time.sleep(0.3)
        for wav in wavs:
            reply = client.transcribe(wav)
            transcripts.append(reply.data)
            seen: dict[str, float] = {}
            deadline = time.monotonic() + PAUSE_S
            while time.monotonic() < deadline:
                event = subscription.next(0.05)
                if event is not None and event[1].data.get("journal_seq") == reply.data["journal_seq"]:
                    seen.setdefault(event[0], time.monotonic())
            if {"transcript", "card"} <= set(seen):
                run.update_ms.append((seen["card"] - seen["transcript"]) * 1000)
        subscription.close()
    run.heard[key] = [t["text"] for t in transcripts]
    return transcripts


def run_audio(scenarios: list[Scenario], paces: list[str]) -> tuple[dict[str, AudioRun], AudioRun]:
    """Per pace: fields, heard texts, update times seen by a subscriber; and the daemon's own logged measures."""
    runs: dict[str, AudioRun] = {}
    logged = AudioRun()
    with tempfile.TemporaryDirectory() as tmp, (running_pulse() if pulse_available() else _no_pulse()) as pulse:
        workdir = Path(tmp)
        stages = STAGES + ([MIC] if pulse else [])
        config = make_config(workdir, stages, ROUTES if pulse else {k: v for k, v in ROUTES.items()
                                                                         if k != "speak.play"})
        daemon = DaemonProcess(workdir, config, env={"PULSE_SERVER": pulse.server} if pulse else None)
        try:
            daemon.wait_for(lambda r: r["state"] == "healthy", timeout_s=600)
            for pace in paces:
                run = runs[pace] = AudioRun()
                for scenario in scenarios:
                    wavs = scenario_audio(scenario, pace, workdir / "piper")
                    transcripts = _speak(daemon, scenario, wavs, run, scenario.name)
                    run.got[scenario.name] = replay(scenario, transcripts, workdir / f"{pace}-{scenario.name}")
            logged.daemon_update_ms, logged.readback_ms = _logged(daemon)
        finally:
            daemon.stop()
    return runs, logged


def _logged(daemon: DaemonProcess) -> tuple[list[float], list[float]]:
    """The daemon's own measures from its JSON log (all so far)."""
    update, readback = [], []
    for line in daemon.logs().splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        if record.get("event") == "casualty card updated":
            update.append(record["update_ms"])
        elif record.get("event") == "card read back":
            readback.append(record["first_audio_ms"])
    return update, readback


class _no_pulse:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
