"""The `capture` stage: the kit's microphone and speaker, a source of audio that no client asked for.

A source stage has two sides. Requests reach `process` like any stage's:
`capture.mute`, `capture.unmute`, and `audio` (TTS output routed through this
stage by `speak` with `play: true`), which is played and passed on unchanged.
Unsolicited audio leaves through `poll`: the worker waits on `wakeup_fd` (an
eventfd the audio callback bumps every block) and sends what `poll` yields,
16 kHz `stream` chunks of one open-ended stream per listening period, which the
daemon routes like a client's `stream` (to ASR) and publishes as
`source: "mic"`. A device that is missing or vanishes puts the stage in
`no_device` and is retried with backoff; nothing raises. The device is opened at
the rate the sound server runs (tcccd.plugins.capture.sound_server), and the
stage reports itself degraded whenever the microphone does not really hear
(tcccd.plugins.capture.stream_watch).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from tcccd.kit.audio import decode, resample, to_pcm16
from tcccd.kit.plugin import Plugin, PluginError, PluginParams
from tcccd.plugins.capture.device import DuplexDevice, NoDevice
from tcccd.plugins.capture.echo import RATE_HZ, EchoGuard, EchoSettings
from tcccd.plugins.capture.levels import LevelMeter
from tcccd.plugins.capture.params import CaptureParams
from tcccd.plugins.capture.playback import PlaybackQueue
from tcccd.plugins.capture.sound_server import ask, routes_to_server
from tcccd.plugins.capture.stream_watch import StreamWatch
from tcccd.wire.protocol import AudioFormat, Message, new_id

MIC_FORMAT = AudioFormat("pcm_s16le", RATE_HZ, 1)


class CapturePlugin(Plugin):
    name = "capture"
    inputs = ("capture.mute", "capture.unmute", "audio")
    outputs = ("stream", "audio", "capture")
    source: ClassVar[str] = "mic"
    Params = CaptureParams
    params: CaptureParams

    def __init__(self, params: PluginParams, context: Any) -> None:
        super().__init__(params, context)
        self.playback = PlaybackQueue()
        self.meter = LevelMeter()
        self.muted = self.params.muted
        self.state = "starting"
        self.device: DuplexDevice | None = None
        self.no_device_reason: str | None = None
        self.retry_at = 0.0
        self.retry_delay_s = self.params.retry_initial_s
        self.barge_ins = 0
        self.overruns_before = 0
        self.overruns_seen = 0  # of the open device: more since the last drain are blocks lost
        self.reopens = 0
        self.watch = StreamWatch(self.params.rate_hz)
        self.rate_source: str | None = None
        self.server_frozen = False
        self.stream_id: str | None = None
        self.seq = 0
        self.pending = np.zeros(0, np.float32)
        self.ending = False  # a mute or a stop arrived: the next poll sends what was heard before it, then closes
        self.finished = False  # stopping: nothing more is listened to
        self._wake_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._guard = EchoGuard(self._echo_settings())
        self._resampler: Any = None
        self._far_resampler: Any = None

    def _echo_settings(self) -> EchoSettings:
        p = self.params
        return EchoSettings(mode=p.echo, gate_tail_ms=p.gate_tail_ms, echo_delay_ms=2 * p.latency_ms,
                            aec_delay_ms=p.aec_delay_ms,
                            barge_in=p.barge_in, talk_over=p.talk_over, barge_in_probability=p.barge_in_probability,
                            barge_in_frames=max(1, p.barge_in_ms // 10), barge_in_min_dbfs=p.barge_in_min_dbfs)

    def setup(self) -> None:
        """Try the device once; a missing one is the `no_device` state, not a failed stage."""
        import sounddevice  # noqa: F401 - fails here, clearly, when PortAudio (libportaudio2) is missing

        self._open_device(time.monotonic())

    def wakeup_fd(self) -> int:
        return self._wake_fd

    def _server_rate_hz(self, now: float) -> tuple[bool, int | None]:
        """(whether the device may be opened, the sound server's rate); a frozen server is `no_device`, and stays
        suspect until it answers again (its full backlog then refuses at once, like no server at all)."""
        if not routes_to_server(self.params.device):
            return True, None
        answer = ask(self.params.server_timeout_s)
        if answer.frozen or (self.server_frozen and not answer.listening):
            self.server_frozen = True
            self._no_device(f"the sound server does not answer ({answer.reason})", now)
            return False, None
        self.server_frozen = False
        return True, answer.rate_hz

    def _open_device(self, now: float) -> None:
        import soxr

        p = self.params
        usable, server_rate_hz = self._server_rate_hz(now)
        if not usable:
            return
        choice = self.watch.choose_rate(server_rate_hz)
        device = DuplexDevice(p.device, p.block_ms, p.buffer_blocks, self.playback, self._wake_fd, p.latency_ms,
                              choice.rate_hz, wake_blocks=max(1, p.chunk_ms // p.block_ms),
                              quiet_peak=10 ** (p.quiet_dbfs / 20), hangover_blocks=p.quiet_hangover_ms // p.block_ms)
        try:
            device.open()
        except NoDevice as exc:
            self._no_device(str(exc), now)
            return
        self.device, self.overruns_seen = device, 0
        self.rate_source = choice.source
        self.watch.opened(device.rate_hz, now)
        self._guard = EchoGuard(self._echo_settings())  # AEC state belongs to one stream's clock
        self._resampler = soxr.ResampleStream(device.rate_hz, RATE_HZ, 1, dtype="float32")
        self._far_resampler = soxr.ResampleStream(device.rate_hz, RATE_HZ, 1, dtype="float32")
        self.state = "muted" if self.muted else "listening"
        self.no_device_reason = None
        self.retry_delay_s = self.params.retry_initial_s
        self.log.info("audio device open", device=device.description, rate_hz=device.rate_hz, rate=choice.source)

    def _no_device(self, reason: str, now: float) -> None:
        if self.state != "no_device":
            self.log.warning("no audio device; retrying with backoff", reason=reason)
        self.state = "no_device"
        self.no_device_reason = reason
        self.retry_at = now + self.retry_delay_s
        self.retry_delay_s = min(self.params.retry_max_s, self.retry_delay_s * 2)

    def poll(self) -> Iterator[Message]:
        """Unsolicited output: microphone chunks, and the end of a stream when listening stops."""
        with contextlib.suppress(BlockingIOError):
            os.eventfd_read(self._wake_fd)
        now = time.monotonic()
        if self.device is None and now >= self.retry_at and not self.finished:
            self._open_device(now)
        if self.device is not None:
            yield from self._reopen_if_lost(now)
        if self.device is not None:
            yield from self._drain()
        if self.ending or self.device is None:
            yield from self._end_stream()  # at once, whether or not the device delivers right now
            self.ending = False

    def finish_streams(self) -> None:
        """A stop: what the device already holds is sent, the stream closed, and nothing is listened to after."""
        self.finished = self.ending = True

    def _reopen_if_lost(self, now: float) -> Iterator[Message]:
        assert self.device is not None
        lost = self.device.lost(now)
        if not lost:
            return
        self.overruns_before += self.device.overruns
        yield from self._drain()  # what the stream delivered before it stopped goes out, not away with it
        silent_since = self.device.last_callback_at or self.device.opened_at
        self.device.close()
        self.device = None
        self.watch.lost(lost, now)
        self._open_device(now)  # a stream that stopped on an xrun comes back at once; a vanished device not
        if self.device is None:
            self.playback.stop()
            yield from self._end_stream()
            return
        self.reopens += 1
        self.watch.reopened(now)
        self.log.warning("audio stream reopened", reason=lost)
        unfilled_s = self.device.unfilled_blocks * self.params.block_ms / 1000  # the new stream's first blocks
        yield from self._gap(now - silent_since + unfilled_s)

    def _drain(self) -> Iterator[Message]:
        """What the device captured since the last poll, after the echo guard; sent unless it came after a mute.

        Blocks waiting here when a mute or a stop arrives were heard before it: they end the stream, not vanish.
        """
        assert self.device is not None
        chunk_samples = RATE_HZ * self.params.chunk_ms // 1000
        blocks = [self.device.blocks.popleft() for _ in range(len(self.device.blocks))]
        overruns, self.overruns_seen = self.device.overruns - self.overruns_seen, self.device.overruns
        yield from self._gap(overruns * self.params.block_ms / 1000)  # blocks lost before these: the oldest go first
        if not blocks:
            return
        near = np.concatenate([b[0] for b in blocks])  # one pass over what arrived: per-call overhead, not per block
        far = np.concatenate([b[1] for b in blocks])
        self.meter.add(near)
        near16 = self._resampler.resample_chunk(near)
        far16 = self._far_resampler.resample_chunk(far)
        # the speaker sounds output_latency_s after the callback took the samples
        since_sound_s = time.monotonic() - self.playback.last_sound_at - self.device.output_latency_s
        clean, barge_in = self._guard.process(near16, far16, self.playback.playing, since_sound_s)
        if barge_in:
            self.barge_ins += 1
            dropped = self.playback.stop()
            self.log.info("barge-in: playback stopped", dropped_s=round(dropped / self.device.rate_hz, 2))
        if (self.muted or self.finished) and not self.ending:
            return
        self.pending = np.concatenate([self.pending, clean])
        if len(self.pending) >= chunk_samples:
            yield self._chunk(self.pending, final=False)
            self.pending = np.zeros(0, np.float32)

    def _gap(self, lost_s: float) -> Iterator[Message]:
        """Audio the open stream lost (the stream stopped, or the stage fell behind): what was heard before it is
        sent, and `seq` skips the chunks lost, so the recogniser marks the utterance they fall in as missing words."""
        if lost_s <= 0 or self.stream_id is None:
            return
        if len(self.pending):
            yield self._chunk(self.pending, final=False)
            self.pending = np.zeros(0, np.float32)
        self.seq += max(1, math.ceil(lost_s * 1000 / self.params.chunk_ms))
        self.log.warning("microphone audio lost", lost_s=round(lost_s, 2))

    def _chunk(self, audio: np.ndarray, final: bool) -> Message:
        if self.stream_id is None:
            self.stream_id, self.seq = f"mic-{new_id()}", 0
        message = Message("stream", id=self.stream_id, seq=self.seq, final=final, payload=to_pcm16(audio),
                          audio=MIC_FORMAT, data={"source": self.source})
        self.seq += 1
        if final:
            self.stream_id = None
        return message

    def _end_stream(self) -> Iterator[Message]:
        """Close the open stream so ASR transcribes the utterance in progress."""
        if self.stream_id is not None or len(self.pending):
            yield self._chunk(self.pending, final=True)
        self.pending = np.zeros(0, np.float32)

    def process(self, message: Message) -> Iterator[Message]:
        if message.type == "audio":
            yield self._play(message)
            return
        if message.type not in ("capture.mute", "capture.unmute"):
            raise PluginError(f"capture accepts {', '.join(self.inputs)}, got {message.type!r}")
        self.muted = message.type == "capture.mute"
        self.ending = self.ending or self.muted
        if self.state in ("listening", "muted"):
            self.state = "muted" if self.muted else "listening"
        self.log.info("microphone muted" if self.muted else "microphone listening")
        yield message.reply("capture", self._summary(), final=True)

    def _play(self, message: Message) -> Message:
        """Queue TTS audio on the speaker and pass the message on: the client still gets its audio."""
        if self.device is None:
            raise PluginError(f"cannot play: no audio device ({self.no_device_reason})", code="no_device")
        if not self.device.has_speaker:  # nothing would ever take it from the queue, and the echo gate would hold
            raise PluginError(f"cannot play: {self.device.description!r} is a microphone, no speaker", code="no_device")
        if message.payload:
            audio, rate_hz = decode(message.payload, message.audio)
            self.playback.add(resample(audio, rate_hz, self.device.rate_hz))
        return message

    def _summary(self) -> dict[str, Any]:
        return {"capture": self.state, "muted": self.muted, "device": self.params.device}

    def health(self) -> dict[str, Any]:
        device, now = self.device, time.monotonic()
        reason = self.watch.degraded_reason(now, self.no_device_reason if device is None else None,
                                            device.silent_for(now) if device else None)
        return {**self._summary(), **({"state": "degraded"} if reason else {}), "degraded_reason": reason,
                "no_device_reason": self.no_device_reason,
                "device_name": device.description if device else None,
                "speaker": device.has_speaker if device else None,
                "device_rate_hz": device.rate_hz if device else None, "rate_source": self.rate_source,
                "recent_reopens": self.watch.recent_reopens(now),
                "overruns": self.overruns_before + (device.overruns if device else 0), "echo": self.params.echo,
                "playing": self.playback.playing, "barge_ins": self.barge_ins, "talk_overs": self._guard.talk_overs,
                "reopens": self.reopens,
                "gated_s": round(self._guard.gated_samples / RATE_HZ, 2),
                "stream_id": self.stream_id, **self.meter.health()}

    def teardown(self) -> None:
        if self.device is not None:
            self.device.close()
            self.device = None
        os.close(self._wake_fd)
