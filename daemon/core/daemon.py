"""The daemon: every part built once, here, with what it needs; then one thread, one poller, signals as messages.

Parts are wired through their constructors, in dependency order, and never by
assigning another part's attributes afterwards: what a part needs from one built
later, or replaced by a reload (the config, the Wyoming door), it reads through a
callable it was given. Signal handlers do nothing but wake the poller
(set_wakeup_fd), and the loop reads the signal numbers like any other input, as
gunicorn's arbiter does. The loop serves worker heartbeats and control first, then
worker output, then clients, so a heartbeat never waits behind audio and replies
go out before new work comes in.

Seams for policies: `every(interval_s, hook)` runs a hook from the loop at most
every `interval_s` (0: every tick, ~50 ms): the telemetry governor and the memory
hook. Hooks run on the loop's thread: they must return quickly, and an exception
in one is logged and does not stop the loop. What a reload opens, closes or
restarts: tcccd.core.reload.
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
from tcccd.card.keeper import CardKeeper
from tcccd.card.readback import speaker_missing
from tcccd.core import health, reload
from tcccd.core.admission import Admission
from tcccd.core.broker import Broker
from tcccd.core.clients import ClientSockets
from tcccd.core.control import ControlRouter
from tcccd.core.degraded_watch import DegradedWatch
from tcccd.core.local_requests import LocalRequests
from tcccd.core.requests import RequestTable
from tcccd.core.sources import SourceRouter
from tcccd.core.supervisor import Supervisor
from tcccd.core.talk_over import TalkOverWatch
from tcccd.core.workers import WorkerHandle
from tcccd.governor.memory_hook import MemoryHook
from tcccd.governor.switch import ProfileSwitcher
from tcccd.governor.telemetry_hook import ProfileGovernor
from tcccd.record.feed import TranscriptFeed
from tcccd.system.notify import Notifier
from tcccd.system.security import Security
from tcccd.system.systemd_policy import SystemdPolicy
from tcccd.wire.protocol import Message
from tcccd.wyoming_door.server import WyomingDoorError

TICK_S = 0.05
CLIENT_MESSAGES_PER_TICK = 256


class Daemon:
    def __init__(self, config: cfg.Config, config_path: Path | None) -> None:
        self.config = config
        self.config_path = config_path
        self.log = structlog.get_logger()
        d = config.daemon
        _make_dirs(d)
        self.security = Security(d)
        self.ctx = zmq.Context()
        self.events = self.ctx.socket(zmq.PUB)
        self.draining_until: float | None = None
        self._hooks: list[list[Any]] = []  # [interval_s, last_run_at, hook]
        self.errors = health.RecentErrors()
        self.supervisor = Supervisor(config, reload.stage_params(config, config.profile), config.profile,
                                     self.on_worker_lost)
        self.profiles = ProfileSwitcher(config, self.supervisor, lambda info: self.publish(
            "profile", Message("profile", data=info)))
        # Requests and battery/thermal caps decide which profile runs; the switcher applies it (issue 12).
        self.governor = ProfileGovernor(config, self.profiles, self.publish)
        # Every final transcript, from the microphone or a client: journalled, then published (issue 11), then
        # extracted onto the casualty card (issue 23), whose requests go through the broker like a client's.
        self.card = CardKeeper(lambda: self.config, lambda: self.feed.journal, lambda: self.profiles.current["name"],
                               lambda client, message: self.broker.on_client(client, message), self.publish,
                               self.errors.note, lambda: speaker_missing(self.config, self.supervisor.stages))
        self.feed = TranscriptFeed(reload.open_journal(config), self.publish, lambda: self.profiles.current["name"],
                                   self.errors.note, self.card.heard)
        self.requests = RequestTable(d)
        self.memory = MemoryHook(lambda: self.config, self.supervisor, self.requests, self.profiles, self.publish)
        self.admission = Admission(lambda: self.config, self.supervisor, self.requests, self.memory.admission)
        self.clients = ClientSockets(d.client_endpoint, d.max_request_bytes)
        self.sources = SourceRouter(lambda: self.config, self.supervisor, self.requests, self.feed)
        self.broker = Broker(lambda: self.config, self.supervisor, self.requests, self.admission, self.clients,
                             self.sources, self.feed, self.publish, self.errors.note, self.answer_local,
                             self.card.on_reply)
        self.door = reload.open_door(config, self.ctx, lambda: self.config)
        self.local = LocalRequests(lambda: self.config, self.supervisor, self.governor, self.requests, self.feed,
                                   self.errors, lambda: self.draining_until is not None,
                                   {"counters": self.broker.report, "sources": self.sources.report,
                                    "memory": self.memory.report,
                                    "wyoming": lambda: self.door.report() if self.door else None,
                                    "card": self.card.report},
                                   self.card.answer)
        self.control = ControlRouter(self.supervisor, {
            "ready": self.supervisor.on_ready, "setup_failed": self.supervisor.on_setup_failed,
            "profile_applied": self.profiles.on_applied, "released": self.memory.on_released})
        self.systemd = SystemdPolicy(Notifier(), self.supervisor, lambda: self.config.daemon.heartbeat_interval_s,
                                     lambda: health.summary_line(self.local.report()))
        self.every(d.telemetry.interval_s, self.governor.tick)
        self.every(0, self.memory.tick)
        self.every(0, self.card.tick)
        self.every(TalkOverWatch.interval_s, TalkOverWatch(lambda: self.supervisor.stages, self.publish,
                                                           self.errors.note).tick)
        self.every(DegradedWatch.interval_s, DegradedWatch(lambda: self.supervisor.stages, self.publish,
                                                           self.errors.note).tick)

    def every(self, interval_s: float, hook: Callable[[float], None]) -> None:
        """Run `hook(now_monotonic)` from the main loop at most every `interval_s` seconds (0: every tick)."""
        self._hooks.append([interval_s, float("-inf"), hook])

    def answer_local(self, message: Message, respond: Callable[[Message], None]) -> None:
        self.local.answer(message, respond)

    def on_worker_lost(self, handle: WorkerHandle, reason: str) -> None:
        self.errors.note("-", f"worker {handle.name}: {reason}")
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
        self.security.start(self.ctx)
        self.events.setsockopt(zmq.LINGER, 0)
        self.security.secure(self.events)
        self.events.bind(d.events_endpoint)
        self.clients.bind(self.ctx, self.security.secure)
        self.supervisor.links.bind(self.ctx)

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
        self.start_door()
        self.log.info("tcccd started", version=__version__, pid=os.getpid(),
                      client_endpoint=self.config.daemon.client_endpoint, curve=self.security.enabled)
        poller = zmq.Poller()
        links = self.supervisor.links
        for sock in (wakeup, links.heartbeat, links.control, links.data, *self.clients.sockets):
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
            if self.draining_until is not None:
                for client, closing in self.sources.overdue(now):
                    self.broker.on_client(client, closing)
                if not self.requests or now > self.draining_until:
                    break
        return self.shutdown()

    def start_door(self) -> None:
        """The Wyoming door when enabled; if it cannot open, ZeroMQ clients are still served."""
        if self.door is None:
            return
        try:
            self.door.start()
        except WyomingDoorError as exc:
            self.log.error("wyoming door not open", error=str(exc))
            self.errors.note("-", str(exc))

    def serve_sockets(self) -> None:
        """Drain what is waiting, control first: a heartbeat never queues behind audio."""
        sup, links, broker = self.supervisor, self.supervisor.links, self.broker
        while links.heartbeat.poll(0):
            sup.on_heartbeat(links.heartbeat.recv_multipart())
        while links.control.poll(0):
            self.control.on_frames(links.control.recv_multipart())
        while links.data.poll(0):
            output = sup.on_worker_output(links.data.recv_multipart())
            if output is not None:
                broker.on_worker(*output)
        for client, frames in self.clients.waiting(CLIENT_MESSAGES_PER_TICK):
            broker.on_client_frames(client, frames)

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
        self.log.info("draining", in_flight=len(self.requests), timeout_s=timeout_s)
        self.systemd.stopping()
        self.admission.stop_accepting()
        self.sources.finish_streams(time.monotonic())  # the microphone's stream would never end
        self.draining_until = time.monotonic() + timeout_s

    def shutdown(self) -> int:
        self.systemd.stopping()
        self.broker.abort(None, "shutting_down", "tcccd stopped before this request finished")
        self.supervisor.stop_all(timeout_s=5.0)
        door_closed = self.door is None or self.door.stop()
        self.governor.close()
        self.feed.use_journal(None)
        self.card.close()
        signal.set_wakeup_fd(-1)
        self.security.stop()
        if door_closed:  # a door thread that did not end still holds sockets: terminating would wait for them
            self.ctx.destroy(linger=200)
        self.log.info("tcccd stopped")
        return 0

    def reload(self) -> None:
        """SIGHUP: take a new config if it is valid. Only stages whose config changed are restarted; a changed
        `transcripts:` reopens the journal, a changed `wyoming:` closes, opens or reopens the door; the `daemon:`
        section (endpoints, directories) needs a restart, and the log says so."""
        self.systemd.reloading()
        try:
            new = cfg.load(self.config_path)
        except cfg.ConfigError as exc:
            self.log.error("reload refused: the new config is invalid; the running one stays", error=str(exc))
            self.errors.note("-", f"reload refused: {exc}")
            self.systemd.reload_refused()
            return
        new, kept_back = reload.keep_daemon_section(self.config, new)
        if kept_back:
            self.log.warning("reload: the daemon section changed; it takes effect at the next restart",
                             changed=kept_back)
            self.errors.note("-", f"reload: daemon.{', daemon.'.join(kept_back)} changed; restart tcccd for it")
        old, self.config = self.config, new
        changed = self.supervisor.reconfigure(new, reload.stage_params(new, new.profile), new.profile)
        self.broker.abort(changed, "reloading", "tcccd reloaded a config that changed this request's stages")
        self.profiles.reset(new, "set in the config (reloaded)")
        self.governor.reset(new)
        if new.transcripts != old.transcripts:
            self.feed.use_journal(reload.open_journal(new))
            self.log.info("reload: transcript journal reopened", enabled=new.transcripts.enabled)
        if new.wyoming != old.wyoming:
            if self.door is not None:
                self.door.stop()
            self.door = reload.open_door(new, self.ctx, lambda: self.config)
            self.start_door()
            self.log.info("reload: wyoming door reopened", enabled=new.wyoming.enabled, uri=new.wyoming.uri)
        self.systemd.reloaded()
        self.log.info("config reloaded", profile=new.profile, restarted_stages=sorted(changed))


def _make_dirs(d: cfg.DaemonSection) -> None:
    for path in (d.runtime_dir, d.state_dir, d.cache_dir):
        path.mkdir(parents=True, exist_ok=True)
    d.runtime_dir.chmod(0o700)
