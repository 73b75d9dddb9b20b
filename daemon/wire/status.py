"""The `status` reply: the health report the daemon gives about itself, typed part by part.

The daemon builds it (tcccd.core.local_requests); `tcccd status`, systemd's
STATUS= line and the Wyoming door's `describe` read it. A stage's
`plugin_health` is the one part plugins extend: what the plugin kit always
reports is typed, the plugin's own facts (backend, model, device, voice) are
passed on as the plugin gives them; `CaptureHealth` types what tcccd's own
microphone stage reports.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from tcccd.wire.model import Bool, Float, Int, OpenReply, Reply, ReplyInvalid, Str
from tcccd.wire.states import WorkerState
from tcccd.wire.status_memory import MemoryStatus
from tcccd.wire.tak import TakStatus

OverallState = Literal["healthy", "degraded", "starting", "stopping"]


class ProfileState(Reply):
    """The profile that runs, and what was asked for when the caps or an override decided otherwise."""

    name: Str = Field(description="the profile that runs")
    reason: Str = Field(description="why it runs (who set it, or the cap that decided)")
    since: Float = Field(description="when it started to run (epoch seconds)")
    requested: Str | None = Field(None, description="the profile asked for (by the config, a client or a person)")
    override_until: Float | None = Field(None, description="an override bypasses the caps until then (epoch s)")
    cap: Str | None = Field(None, description="the profile a battery or thermal cap holds it to, or null")
    reading: Str | None = Field(None, description="the reading behind the cap (`battery_percent`, `hottest_c`)")
    value: Float | None = Field(None, description="that reading's value")


class Latency(Reply):
    p50_ms: Float | None = Field(None, description="median, over the last 512 messages")
    p95_ms: Float | None = Field(None, description="95th percentile")
    p99_ms: Float | None = Field(None, description="99th percentile")
    count: Int | None = Field(None, description="messages measured")


class PluginHealth(OpenReply):
    """What the stage's worker reports for it: the plugin kit's facts, then the plugin's own (`Plugin.health()`:
    backend, model, device, voice...), which tcccd passes on as the plugin gives them. Empty until the worker's
    first heartbeat."""

    state: WorkerState | None = Field(None, description="the stage's own state, as the plugin kit sees it, or "
                                      "`degraded` when the plugin reports that it does not work as it should")
    degraded_reason: Str | None = Field(None, description="why the plugin reports itself degraded (shown in "
                                                          "status and sent as an alert)")
    plugin: Str | None = Field(None, description="the plugin's name")
    last_error: Str | None = Field(None, description="the last error it reported")
    errors: Int | None = Field(None, description="errors since it started")
    latency: Latency | None = Field(None, description="its processing time per message")
    health_error: Str | None = Field(None, description="why the plugin's own health() failed, if it did")

    def fact(self, key: str) -> str | None:
        """One of the plugin's own facts (`model`, `voice`, `backend`) as text; None when it reports none."""
        value = (self.model_extra or {}).get(key)
        return None if value is None else str(value)


class CaptureHealth(PluginHealth):
    """The capture (microphone) stage's plugin_health."""

    capture: Literal["listening", "muted", "no_device"] | None = Field(
        None, description="what the microphone is doing (absent when the plugin's health() failed)")
    device: Str | None = Field(None, description="the configured audio device")
    muted: Bool | None = Field(None, description="muted by `capture.mute`")
    no_device_reason: Str | None = Field(None, description="why there is no device; it is retried with backoff")
    device_name: Str | None = Field(None, description="the device in use")
    device_rate_hz: Int | None = Field(None, description="the rate the stream runs at")
    speaker: Bool | None = Field(None, description="the device has an output: false for a microphone alone, where "
                                 "read-back is refused")
    rate_source: Str | None = Field(None, description="where that rate came from: `sound server` (the rate "
                                    "PulseAudio or PipeWire runs), `config` (rate_hz), `device default` "
                                    "(PortAudio's), or why it was switched after stalls")
    input_level_dbfs: Float | None = Field(None, description="input level")
    input_peak_dbfs: Float | None = Field(None, description="input peak")
    clipping: Bool | None = Field(None, description="the input clips now")
    clipped_samples: Int | None = Field(None, description="clipped samples counted")
    overruns: Int | None = Field(None, description="blocks dropped because the stage fell behind, plus PortAudio "
                                                   "input overflows")
    reopens: Int | None = Field(None, description="times the device was opened again")
    recent_reopens: Int | None = Field(None, description="reopens in the last minute: 2 or more make the stage "
                                                         "degraded")
    echo: Str | None = Field(None, description="echo handling: `gate` or `aec`")
    playing: Bool | None = Field(None, description="the speaker plays now")
    gated_s: Float | None = Field(None, description="seconds of microphone gated while the speaker played")
    barge_ins: Int | None = Field(None, description="times speech cut the speaker short")
    talk_overs: Int | None = Field(None, description="times the gate heard the medic talk over the kit and "
                                                     "passed the cleaned audio (echo: gate with barge_in)")
    stream_id: Str | None = Field(None, description="the open listening stream's request id")


PLUGIN_HEALTH: dict[str, type[PluginHealth]] = {"capture": CaptureHealth}


def read_plugin_health(data: dict[str, Any]) -> PluginHealth:
    """A stage's reported health as its plugin's model (CaptureHealth for `capture`, PluginHealth for others).
    A report that breaks the model is kept as an empty health that says why: a plugin's bug is not the daemon's."""
    model = PLUGIN_HEALTH.get(str(data.get("plugin")), PluginHealth)
    try:
        return model.from_data(data, "plugin_health")
    except ReplyInvalid as exc:
        return PluginHealth(plugin=data.get("plugin") if isinstance(data.get("plugin"), str) else None,
                            health_error=str(exc))


class StageStatus(Reply):
    name: Str = Field(description="the stage's name in the config")
    plugin: Str = Field(description="its plugin, as the config names it")
    worker: Str = Field(description="the worker process that hosts it")
    state: WorkerState = Field(description="its worker's state, or worse when the plugin reports worse")
    pid: Int | None = Field(None, description="the worker's process id")
    restarts: Int = Field(description="restarts of its worker")
    queue_depth: Int = Field(description="messages waiting for it")
    max_queue: Int = Field(description="the queue's limit (`busy` above it)")
    dropped_audio_chunks: Int = Field(description="live-audio chunks dropped because it was behind")
    busy_rejections: Int = Field(description="requests refused `busy` because its queue was full")
    last_error: Str | None = Field(None, description="its last error")
    latency: Latency = Field(description="its latency")
    rss_bytes: Int | None = Field(None, description="the worker's RSS")
    peak_rss_bytes: Int | None = Field(None, description="the worker's peak RSS")
    plugin_health: PluginHealth = Field(description="what its worker reports for it")


class Endpoints(Reply):
    client: Str = Field(description="requests and replies (ROUTER)")
    events: Str = Field(description="events (PUB): transcripts, profile changes, alerts")


class Counters(Reply):
    unreadable_messages: Int = Field(description="messages without a readable id: dropped")
    bad_messages: Int = Field(description="malformed messages answered `bad_message`")
    late_outputs: Int = Field(description="worker outputs for requests that had already ended")
    late_inputs: Int = Field(description="client messages for requests that had already ended")
    undeliverable_replies: Int = Field(description="replies whose client was gone")


class ErrorEntry(Reply):
    ts: Float = Field(description="when (epoch seconds)")
    request_id: Str = Field(description="the request it concerns (`-` for none)")
    message: Str = Field(description="what happened")


class JournalHealth(Reply):
    path: Str = Field(description="the transcript journal's file")
    state: Literal["ok", "failing"] = Field(description="`failing` while appends fail")
    appends: Int = Field(description="transcripts recorded since start")
    failures: Int = Field(description="appends that failed")
    last_error: Str | None = Field(None, description="why the last append failed")
    size_bytes: Int = Field(description="the journal's size on disk")
    held_for_card: Int = Field(0, description="transcripts kept past the size budget because the casualty card has "
                                              "not read them yet")


class SourcesStatus(Reply):
    source_chunks: Int = Field(description="audio chunks the source stages (the microphone) sent")
    source_chunks_not_routed: Int = Field(description="of those, dropped because their route was not ready")
    open_streams: Int = Field(description="listening streams open")


class WyomingStatus(Reply):
    uri: Str = Field(description="where the Wyoming door listens")
    listening: Bool = Field(description="it accepts connections")
    failure: Str | None = Field(None, description="why it could not open")
    transcript_streaming: Bool = Field(description="transcriptions stream (transcript-chunk)")
    security: Str = Field(description="`loopback only`, or a warning that it is open to the network")
    connections_open: Int = Field(description="connections open now")
    connections_total: Int = Field(description="connections since start")
    requests_open: Int = Field(description="requests open on the daemon now")
    requests: dict[Str, Int] = Field(description="requests served, by kind (transcribe, speak, describe)")
    errors: Int = Field(description="Wyoming errors sent")
    cancelled_on_disconnect: Int = Field(description="requests cancelled because their client left")
    refused_events: Int = Field(description="malformed events answered `bad_message`")
    dropped_events: Int = Field(description="events of a type the door does not serve")
    refused_connections: Int = Field(description="connections refused over wyoming.max_connections")


class CardStatus(Reply):
    """The casualty card kept by the daemon (tcccd.card.keeper): where it stands, and what waits for review."""

    enabled: Bool = Field(description="the card stage is routed (`routes.card.extract`)")
    mission: Int = Field(description="the mission under way (1 = the first; `card.close` ends one)")
    casualty: Int = Field(description="the casualty the next utterance is filed under")
    casualties: list[Int] = Field(description="casualties with a card")
    events: Int = Field(description="events logged since start")
    unconfirmed: Int = Field(description="fields shown unconfirmed (an uncertain word, a value out of range): "
                                         "for the medic to confirm or reject")
    extracted: Int = Field(description="transcripts through the card stage since start")
    waiting: Int = Field(description="transcripts journalled since start and not yet through the card stage")
    skipped: Int = Field(description="transcripts the stage refused or crashed on, skipped with an alert")
    retries: Int = Field(description="extractions sent again after a failure")
    readbacks: Int = Field(description="read-backs spoken")
    readback_errors: Int = Field(description="read-backs that failed")
    readbacks_not_played: Int = Field(description="read-backs not attempted: no speaker (`readback_last_error` "
                                                  "says why)")
    readback_waiting: Int = Field(description="read-backs waiting for the medic to pause")
    readback_last_error: Str | None = Field(None, description="why the last read-back failed")
    clock_ahead_min: Int | None = Field(None, description="this mission, an act was said as done at a time this far "
                                                          "ahead of the kit's clock (30 min or more): its clock or "
                                                          "zone is likely wrong (the latest such act)")
    clock_said_hhmm: Str | None = Field(None, description="the time said for it")
    clock_read_hhmm: Str | None = Field(None, description="the kit's clock when it was said")
    clock_ahead_at: Float | None = Field(None, description="when it was said (epoch s)")


class TelemetryStatus(Reply):
    battery_percent: Float | None = Field(None, description="battery charge")
    battery_status: Str | None = Field(None, description="charging, discharging, full...")
    mains_online: Bool | None = Field(None, description="mains power present")
    power_w: Float | None = Field(None, description="total power draw")
    hottest_zone: Str | None = Field(None, description="the hottest thermal zone")
    hottest_c: Float | None = Field(None, description="its temperature")
    source: Str = Field(description="where the readings come from (`sysfs`, `jtop`)")
    enabled: Bool = Field(description="whether readings may cap the profile")
    read_at: Float | None = Field(None, description="when they were read (epoch seconds)")
    problems: list[Str] = Field(default_factory=list, description="readings that failed, and why")


class PowerModeStatus(Reply):
    current: Str | None = Field(None, description="the nvpmodel power mode running (null: not a Jetson)")
    requested: Str | None = Field(None, description="the mode the profile asks for")
    state: Str | None = Field(None, description="`current`, `switching`, `applied`, `failed`, `needs_reboot`, "
                                                "`unknown` or `no_nvpmodel`")
    detail: Str | None = Field(None, description="why, when it is not applied")


class StatusReport(Reply):
    """Final: the health report, the answer to `status`."""

    TYPE: ClassVar[str] = "status"
    version: Str = Field(description="tcccd's version")
    pid: Int = Field(description="the daemon's process id")
    uptime_s: Float = Field(description="seconds since the daemon started")
    state: OverallState = Field(description="the verdict: `healthy`, `degraded`, `starting` or `stopping`")
    profile: ProfileState = Field(description="the profile that runs")
    stages: list[StageStatus] = Field(description="every stage of the pipeline")
    requests_in_flight: Int = Field(description="requests open now")
    memory: MemoryStatus = Field(description="memory use and the capper's view")
    endpoints: Endpoints = Field(description="where clients connect")
    counters: Counters = Field(description="messages that went wrong, counted")
    last_errors: list[ErrorEntry] = Field(description="the most recent errors, oldest first (at most 20)")
    transcripts: JournalHealth | None = Field(description="the transcript journal; null when disabled")
    sources: SourcesStatus = Field(description="audio no client asked for (the microphone)")
    wyoming: WyomingStatus | None = Field(description="the Wyoming door; null when it is off")
    card: CardStatus = Field(description="the casualty card")
    tak: TakStatus | None = Field(None, description="the TAK link (docs/tak.md); null when the daemon has none")
    telemetry: TelemetryStatus = Field(description="battery, power and temperature readings")
    power_mode: PowerModeStatus = Field(description="the nvpmodel power mode")
