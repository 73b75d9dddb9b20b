"""The daemon's main loop: one thread, one poller, signals as messages.

Signal handlers do nothing but wake the poller (set_wakeup_fd), and the loop
reads the signal numbers like any other input, as gunicorn's arbiter does. The
loop serves worker control first, then worker output, then clients, so a
heartbeat never waits behind audio and replies go out before new work comes in.

What the loop drives lives elsewhere: routing in tcccd.core.broker, processes in
tcccd.core.supervisor, local requests in tcccd.core.local_requests, profile switches in
tcccd.core.profile_switch, systemd in tcccd.system.systemd_policy, CurveZMQ in tcccd.core.security.

Seams for policies inside the daemon: `every(interval_s, hook)` runs a hook
from the loop at most every `interval_s` (0: every tick, ~50 ms). A telemetry
policy (issue 12) registers a periodic hook and calls `self.profiles.switch`;
a memory capper (issue 13) registers a per-tick hook and reads
`self.supervisor`. Hooks run on the loop's thread: they must return quickly,
and an exception in one is logged and does not stop the loop.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
import zmq

from tcccd import __version__
from tcccd import config as cfg
from tcccd.core import health
from tcccd.core.broker import Broker
from tcccd.core.governor import ProfileGovernor
from tcccd.core.local_requests import LocalRequests
from tcccd.core.memory_hook import MemoryHook
from tcccd.core.profile_switch import ProfileSwitcher
from tcccd.core.security import Security
from tcccd.core.sources import attach as attach_sources
from tcccd.core.supervisor import Supervisor
from tcccd.core.workers import WorkerHandle
from tcccd.record.feed import TranscriptFeed
from tcccd.record.journal import TranscriptJournal
from tcccd.system.notify import Notifier
from tcccd.system.systemd_policy import SystemdPolicy
from tcccd.wire.protocol import Message
from tcccd.wyoming_door.server import WyomingDoorError
from tcccd.wyoming_door.server import attach as attach_wyoming

TICK_S = 0.05
CLIENT_MESSAGES_PER_TICK = 256


class Daemon:
    def __init__(self, config: cfg.Config, config_path: Path | None) -> None:
        self.config = config
        self.config_path = config_path
        self.log = structlog.get_logger()
        self.security = Security(config.daemon)
        self.ctx = zmq.Context()
        self.draining_until: float | None = None
        self._hooks: list[list[Any]] = []  # [interval_s, last_run_at, hook]
        self.supervisor = Supervisor(config, _stage_params(config, config.profile), config.profile,
                                     self.on_worker_lost)
        self.profiles = ProfileSwitcher(config, self.supervisor, lambda info: self.publish(
            "profile", Message("profile", data=info)))
        self.broker = Broker(config, self.supervisor, self.publish, self.note_error, self.answer_local)
        # Requests and battery/thermal caps decide which profile runs; the switcher applies it (issue 12).
        self.governor = ProfileGovernor(config, self.profiles, self.publish)
        self.every(config.daemon.telemetry.interval_s, self.governor.tick)
        self.local = LocalRequests(lambda: self.config, self.supervisor, self.governor, self.broker.requests,
                                   self.broker.counters, lambda: self.draining_until is not None)
        # Audio no client sent (the microphone) and every final transcript: journalled, then published (issue 11).
        self.feed = TranscriptFeed(None, self.publish, lambda: self.profiles.current["name"], self.note_error)
        self.local.sources = attach_sources(self.broker, self.feed)
        self.local.wyoming = self.wyoming = attach_wyoming(self.broker, self.feed, config.wyoming, config.daemon)
        self.memory = MemoryHook(lambda: self.config, self.supervisor, self.broker.requests, self.profiles,
                                 self.publish)
        self.broker.admission = self.memory.admission
        self.local.memory = self.memory.report
        self.every(0, self.memory.tick)
        self.systemd = SystemdPolicy(Notifier(), self.supervisor, lambda: self.config.daemon.heartbeat_interval_s,
                                     lambda: health.summary_line(self.local.report()))

    def every(self, interval_s: float, hook: Callable[[float], None]) -> None:
        """Run `hook(now_monotonic)` from the main loop at most every `interval_s` seconds (0: every tick)."""
        self._hooks.append([interval_s, float("-inf"), hook])

    def answer_local(self, message: Message, respond: Callable[[Message], None]) -> None:
        self.local.answer(message, respond)

    def note_error(self, request_id: str, text: str) -> None:
        self.local.note_error(request_id, text)

    def on_worker_lost(self, handle: WorkerHandle, reason: str) -> None:
        self.note_error("-", f"worker {handle.name}: {reason}")
        self.publish("alert", Message("alert", data={"worker": handle.name, "message": reason}))
        self.broker.worker_lost(handle, reason)
        self.profiles.worker_lost(handle)

    def publish(self, topic: str, message: Message) -> None:
        try:
            self.events.send_multipart([topic.encode(), *message.to_frames()], zmq.NOBLOCK)
        except zmq.ZMQError as exc:
            self.log.warning("event not published", topic=topic, error=str(exc))

    def bind(self) -> None:
        d = self.config.daemon
        for path in (d.runtime_dir, d.state_dir, d.cache_dir):
            path.mkdir(parents=True, exist_ok=True)
        d.runtime_dir.chmod(0o700)
        if self.config.transcripts.enabled:
            self.feed.journal = self.local.journal = TranscriptJournal.open(d.state_dir, self.config.transcripts)
        self.security.start(self.ctx)
        self.events = self.ctx.socket(zmq.PUB)
        self.events.setsockopt(zmq.LINGER, 0)
        self.security.secure(self.events)
        self.events.bind(d.events_endpoint)
        self.broker.bind(self.ctx, self.security.secure)
        self.supervisor.bind(self.ctx)

    def install_signals(self) -> socket.socket:
        reader, writer = socket.socketpair()
        for sock in (reader, writer):
            sock.setblocking(False)
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, lambda *_: None)
        self._wakeup_writer = writer
        return reader

    def run(self) -> int:
        structlog.contextvars.bind_contextvars(profile=self.profiles.current["name"])
        self.bind()
        wakeup = self.install_signals()
        self.supervisor.start_all()
        self.governor.start()
        self.start_wyoming()
        self.log.info("tcccd started", version=__version__, pid=os.getpid(),
                      client_endpoint=self.config.daemon.client_endpoint, curve=self.security.enabled)
        poller = zmq.Poller()
        sup = self.supervisor
        for sock in (wakeup, sup.heartbeat, sup.control, sup.data, self.broker.clients):
            poller.register(sock, zmq.POLLIN)
        while True:
            events = dict(poller.poll(TICK_S * 1000))
            if wakeup.fileno() in events and self.on_signals(wakeup.recv(64)):
                break
            self.serve_sockets()
            now = time.monotonic()
            self.supervisor.tick(now)
            self.broker.expire(now)
            self.broker.flush_held()
            self.profiles.tick(now)
            self.systemd.tick(now)
            self.run_hooks(now)
            if self.draining_until is not None and (not self.broker.requests or now > self.draining_until):
                break
        return self.shutdown()

    def start_wyoming(self) -> None:
        """The Wyoming door when enabled; if it cannot open, ZeroMQ clients are still served."""
        if self.wyoming is None:
            return
        try:
            self.wyoming.start()
        except WyomingDoorError as exc:
            self.log.error("wyoming door not open", error=str(exc))
            self.note_error("-", str(exc))

    def serve_sockets(self) -> None:
        """Drain what is waiting, control first: a heartbeat never queues behind audio."""
        sup, broker = self.supervisor, self.broker
        while sup.heartbeat.poll(0):
            sup.on_heartbeat(sup.heartbeat.recv_multipart())
        while sup.control.poll(0):
            unhandled = sup.on_control(sup.control.recv_multipart())
            if unhandled is not None and unhandled[1].type == "profile_applied":
                self.profiles.on_applied(*unhandled)
            elif unhandled is not None and unhandled[1].type == "released":
                self.memory.on_released(*unhandled)
        while sup.data.poll(0):
            output = sup.on_worker_output(sup.data.recv_multipart())
            if output is not None:
                broker.on_worker(*output)
        for _ in range(CLIENT_MESSAGES_PER_TICK):
            if not broker.clients.poll(0):
                break
            broker.on_client_frames(broker.clients.recv_multipart())

    def run_hooks(self, now: float) -> None:
        for entry in self._hooks:
            interval_s, last_at, hook = entry
            if now - last_at >= interval_s:
                entry[1] = now
                try:
                    hook(now)
                except Exception:  # noqa: BLE001 - a policy's bug must not stop the daemon
                    self.log.error("daemon hook failed", hook=getattr(hook, "__qualname__", repr(hook)),
                                   exc_info=True)

    def on_signals(self, raw: bytes) -> bool:
        """Act on the signals that arrived; True when the loop must end now."""
        for signum in raw:
            if signum in (signal.SIGTERM, signal.SIGINT):
                if self.draining_until is not None:
                    return True  # a second signal: stop now
                self.start_drain()
            elif signum == signal.SIGHUP:
                self.reload()
        return False

    def start_drain(self) -> None:
        timeout_s = self.config.daemon.drain_timeout_s
        self.log.info("draining", in_flight=len(self.broker.requests), timeout_s=timeout_s)
        self.systemd.stopping()
        self.broker.accepting = False
        self.draining_until = time.monotonic() + timeout_s

    def shutdown(self) -> int:
        self.systemd.stopping()
        self.broker.abort(None, "shutting_down", "tcccd stopped before this request finished")
        self.supervisor.stop_all(timeout_s=5.0)
        if self.wyoming is not None:
            self.wyoming.stop()
        self.governor.close()
        if self.feed.journal is not None:
            self.feed.journal.close()
        signal.set_wakeup_fd(-1)
        self.security.stop()
        self.ctx.destroy(linger=200)
        self.log.info("tcccd stopped")
        return 0

    def reload(self) -> None:
        """SIGHUP: take a new config if it is valid; only stages whose config changed are restarted."""
        self.systemd.reloading()
        try:
            new = cfg.load(self.config_path)
        except cfg.ConfigError as exc:
            self.log.error("reload refused: the new config is invalid; the running one stays", error=str(exc))
            self.note_error("-", f"reload refused: {exc}")
            self.systemd.reload_refused()
            return
        if new.daemon != self.config.daemon:
            self.log.warning("daemon section changed: endpoints and directories take effect at the next restart")
            new = new.model_copy(update={"daemon": self.config.daemon})
        self.config = self.broker.config = new
        changed = self.supervisor.reconfigure(new, _stage_params(new, new.profile), new.profile)
        self.broker.abort(changed, "reloading", "tcccd reloaded a config that changed this request's stages")
        self.profiles.reset(new, "set in the config (reloaded)")
        self.governor.reset(new)
        self.systemd.reloaded()
        self.log.info("config reloaded", profile=new.profile, restarted_stages=sorted(changed))


def _stage_params(config: cfg.Config, profile_name: str) -> dict[str, dict[str, Any]]:
    profile = cfg.load_profile(config, profile_name)
    return {s.name: cfg.stage_params(config, s, profile) for s in config.enabled_stages}
