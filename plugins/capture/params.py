"""The capture stage's settings: the device, its buffering, the chunks sent to ASR, the echo guard, retries."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tcccd.kit.plugin import PluginParams


class CaptureParams(PluginParams):
    device: str = Field("default", min_length=1, description="ALSA/PortAudio device name (exact, or a part of it)")
    rate_hz: int | None = Field(None, ge=8000, le=192000, description="device rate; null = the sound server's own "
                                "rate (PulseAudio, PipeWire), else the device's default")
    block_ms: int = Field(20, ge=10, le=32, description="audio callback block")
    buffer_blocks: int = Field(100, ge=4, le=3000, description="blocks held when the stage falls behind")
    latency_ms: int = Field(100, ge=5, le=500, description="device buffering: lower answers barge-in sooner, "
                            "higher survives a loaded CPU without xruns")
    chunk_ms: int = Field(64, ge=10, le=1000, description="audio sent to ASR per message")
    quiet_dbfs: float = Field(-50.0, le=0, description="a block whose peak stays under this is silence: the stage "
                              "then wakes only with the worker's 0.25 s poll (every block is still sent)")
    quiet_hangover_ms: int = Field(1500, ge=0, le=10_000, description="chunk_ms pace kept this long after sound, "
                                   "so ASR gets the pause that ends an utterance at once (keep above whisper's "
                                   "min_silence_ms)")
    muted: bool = Field(False, description="start muted")
    echo: Literal["gate", "aec"] = Field("gate", description="gate: mic off while speaking; aec: WebRTC AEC3")
    gate_tail_ms: int = Field(300, ge=0, le=5000, description="mic stays off this long after playback ends")
    aec_delay_ms: int = Field(0, ge=0, le=500, description="hint: output-to-input delay of the device")
    barge_in: bool = Field(True, description="with echo: aec, speech during playback stops it")
    talk_over: Literal["alert", "pass", "off"] = Field(
        "alert", description="with echo: gate, the medic talking over the kit (AEC3 + a voice detector on the gated "
        "audio) stops playback and is counted (alert); `pass` also passes the cleaned audio from the start of that "
        "speech (it can carry what of the kit the canceller left); `off` only gates")
    barge_in_probability: float = Field(0.7, gt=0, lt=1)
    barge_in_ms: int = Field(80, ge=10, le=1000, description="speech this long during playback stops it")
    barge_in_min_dbfs: float = Field(-45.0, le=0)
    retry_initial_s: float = Field(0.5, gt=0)
    retry_max_s: float = Field(10.0, gt=0)
    server_timeout_s: float = Field(1.0, gt=0, le=10, description="a sound server silent this long is frozen: "
                                    "reported, and PortAudio (which would block on it) is not asked")
