"""The daemon: every part built once, here, in dependency order; then one thread, one poller, signals as messages.

Each part receives what it needs as a small port (tcccd.ports, or a Protocol in
its own module) through its constructor, so each is built after what it uses:
the config in force comes from a RunningConfig a reload updates, the journal and
the Wyoming door from slots a reload refills, and the daemon's own requests (the
card, its read-back, TAK's) leave through internal clients the loop drains into
the broker. Signal handlers only wake the poller (set_wakeup_fd); the loop reads
the signal numbers like any other input, as gunicorn's arbiter does. It serves
heartbeats and control first, then worker output, then clients, then tells the
parts that care of the workers the supervisor lost. `every(interval_s, hook)`
runs a policy from the loop (the governor, the memory hook, the card keeper,
TAK, the talk-over watch): hooks must return quickly, and one that raises is
logged and does not stop the loop. What a reload changes: tcccd.core.reload.
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
from tcccd.card.clock import ClockWatch
from tcccd.card.keeper import CardKeeper
from tcccd.card.readback import ReadBack
from tcccd.card.requests import CardRequests
from tcccd.card.store import CardStore
from tcccd.core import health, reload
from tcccd.core.admission import Admission
from tcccd.core.broker import Broker
from tcccd.core.clients import ClientSockets, Events, InternalClients
from tcccd.core.control import ControlRouter
from tcccd.core.local_requests import LocalRequests
from tcccd.core.requests import RequestTable, RoutingCounters
from tcccd.core.roster import Roster
from tcccd.core.sources import SourceRouter
from tcccd.core.supervisor import Supervisor
from tcccd.core.workers import WorkerHandle, WorkerLinks
from tcccd.governor.memory_hook import MemoryHook
from tcccd.governor.profiles import ProfileBook
from tcccd.governor.switch import ProfileSwitcher
from tcccd.governor.telemetry_hook import ProfileGovernor
from tcccd.record.feed import JournalSlot, TranscriptFeed
from tcccd.system.notify import Notifier
from tcccd.system.security import Security
from tcccd.system.systemd_policy import SystemdPolicy
from tcccd.tak.ports import Desk, Voice
from tcccd.tak.service import TakService
from tcccd.wire.alerts import WorkerLost

TICK_S = 0.05
CLIENT_MESSAGES_PER_TICK = 256


class Daemon:
    def __init__(self, config: cfg.Config, config_path: Path | None) -> None:
        self.config_path = config_path
        self.log = structlog.get_logger()
        d = config.daemon
        _make_dirs(d)
        self.config = cfg.RunningConfig(config)
        self.security = Security(d)
        self.ctx = zmq.Context()
        self.events = Events(self.ctx)
        self.errors = health.RecentErrors()
        self.alerts = health.Alerts(self.events, self.errors)
        self.draining_until: float | None = None
        self._hooks: list[list[Any]] = []  # [interval_s, last_run_at, hook]
        # workers, and the profile they run
        self.book = ProfileBook(self.config)
        self.roster = Roster(config, reload.stage_params(config, self.book.load(config.profile)))
        self.links = WorkerLinks(d.runtime_dir)
        self.supervisor = Supervisor(config, config.profile, self.roster, self.links)
        self.profiles = ProfileSwitcher(self.config, self.book, self.roster, self.supervisor, self.events)
        self.governor = ProfileGovernor(self.config, self.book, self.profiles, self.events)
        self.requests = RequestTable(d)
        self.memory = MemoryHook(self.config, self.book, self.roster, self.supervisor, self.requests, self.profiles,
                                 self.governor, self.events)
        self.admission = Admission(self.config, self.roster, self.requests, self.memory)
        # the record: every final transcript journalled, published, then onto the casualty card
        self.internal = InternalClients()
        self.journal = JournalSlot(reload.open_journal(config))
        self.card_store = CardStore(self.journal, self.events)
        # the card on the team's TAK map, sent on the medic's word; a spoken "send nine line" is never the card's
        self.tak = TakService(self.config, Desk(self.card_store, self.journal), Voice(self.internal.client("tak")))
        readback = ReadBack(self.config, self.profiles, self.internal.client("readback"), self.roster)
        self.card = CardKeeper(self.config, self.journal, self.card_store, self.internal.client("card"), readback,
                               self.alerts, ClockWatch(self.alerts), self.tak.commands)
        self.feed = TranscriptFeed(self.journal, self.events, self.profiles, self.alerts, [self.card, self.tak])
        # clients, and the routes their requests take
        self.clients = ClientSockets(d.client_endpoint, d.max_request_bytes)
        self.sources = SourceRouter(self.config, self.roster, self.supervisor, self.requests, self.feed, self.errors)
        self.door = reload.DoorSlot(self.config, self.ctx)
        self.counters = RoutingCounters(self.requests, self.clients)
        self.local = LocalRequests(self.config, self.roster, self.governor, self.requests, self.journal, self.errors,
                                   self.admission, {"counters": self.counters, "sources": self.sources,
                                                    "memory": self.memory, "wyoming": self.door, "card": self.card,
                                                    "tak": self.tak},
                                   CardRequests(self.card_store), self.tak)
        self.broker = Broker(self.config, self.roster, self.supervisor, self.requests, self.admission, self.clients,
                             self.sources, self.feed, self.alerts, self.errors, self.counters, self.local,
                             self.internal)
        self.control = ControlRouter(self.roster, self.supervisor, self.profiles, self.memory)
        self.systemd = SystemdPolicy(Notifier(), self.supervisor, self.config, self.local)
        self.every(d.telemetry.interval_s, self.governor.tick)
        self.every(0, self.memory.tick)
        self.every(0, self.card.tick)
        self.every(0, self.tak.tick)
        self.every(health.TalkOverWatch.interval_s, health.TalkOverWatch(self.roster, self.alerts).tick)
        self.every(health.DegradedWatch.interval_s, health.DegradedWatch(self.roster, self.alerts).tick)

    def every(self, interval_s: float, hook: Callable[[float], None]) -> None:
        """Run `hook(now_monotonic)` from the main loop at most every `interval_s` seconds (0: every tick)."""
        self._hooks.append([interval_s, float("-inf"), hook])

    def on_worker_lost(self, handle: WorkerHandle, reason: str) -> None:
        self.alerts.alert(WorkerLost(worker=handle.name, message=f"worker {handle.name}: {reason}"))
        self.broker.worker_lost(handle, reason)
        self.profiles.worker_lost(handle)

    def bind(self) -> None:
        d = self.config.current().daemon
        self.security.start(self.ctx)
        self.events.bind(d.events_endpoint, self.security.secure)
        self.clients.bind(self.ctx, self.security.secure)
        self.links.bind(self.ctx)

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
        structlog.contextvars.bind_contextvars(profile=self.profiles.name())
        self.bind()
        wakeup = self.install_signals()
        self.supervisor.start_all()
        self.governor.start()
        self.start_door()
        self.log.info("tcccd started", version=__version__, pid=os.getpid(),
                      client_endpoint=self.config.current().daemon.client_endpoint, curve=self.security.enabled)
        poller = zmq.Poller()
        links = self.links
        for sock in (wakeup, links.heartbeat, links.control, links.data, *self.clients.sockets):
            poller.register(sock, zmq.POLLIN)
        while True:
            events = dict(poller.poll(TICK_S * 1000))
            if wakeup.fileno() in events and self.on_signals(wakeup.recv(64)):
                break
            self.serve_sockets()
            now = time.monotonic()
            self.supervisor.tick(now)
            for handle, reason in self.supervisor.take_losses():
                self.on_worker_lost(handle, reason)
            self.broker.expire(now)
            self.broker.flush_held()
            self.profiles.tick(now)
            self.systemd.tick(now)
            self.run_hooks(now)
            self.send_internal()
            if self.draining_until is not None:
                for client, closing in self.sources.overdue(now):
                    self.broker.on_client(client, closing)
                if not self.requests or now > self.draining_until:
                    break
        return self.shutdown()

    def start_door(self) -> None:
        """The Wyoming door when enabled; if it cannot open, ZeroMQ clients are still served."""
        problem = self.door.start()
        if problem is not None:
            self.errors.note("-", problem)

    def serve_sockets(self) -> None:
        """Drain what is waiting, control first: a heartbeat never queues behind audio."""
        sup, links, broker = self.supervisor, self.links, self.broker
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
        self.send_internal()

    def send_internal(self) -> None:
        """The daemon's own requests (card extraction, read-back), into the broker as any client's."""
        for client, message in self.internal.outgoing():
            self.broker.on_client(client, message)

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
        timeout_s = self.config.current().daemon.drain_timeout_s
        self.log.info("draining", in_flight=len(self.requests), timeout_s=timeout_s)
        self.systemd.stopping()
        self.admission.stop_accepting()
        self.sources.finish_streams(time.monotonic())  # the microphone's stream would never end
        self.draining_until = time.monotonic() + timeout_s

    def shutdown(self) -> int:
        self.systemd.stopping()
        self.broker.abort(None, "shutting_down", "tcccd stopped before this request finished")
        self.supervisor.stop_all(timeout_s=5.0)
        door_closed = self.door.stop()
        self.governor.close()
        self.tak.close()
        self.card_store.close()
        self.journal.use(None)
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
        old = self.config.current()
        new, kept_back = reload.keep_daemon_section(old, new)
        if kept_back:
            self.log.warning("reload: the daemon section changed; it takes effect at the next restart",
                             changed=kept_back)
            self.errors.note("-", f"reload: daemon.{', daemon.'.join(kept_back)} changed; restart tcccd for it")
        self.config.replace(new)
        try:
            params = reload.stage_params(new, self.book.load(new.profile))
        except cfg.ConfigError as exc:  # checked by cfg.load already; the file may have changed since
            self.config.replace(old)
            self.log.error("reload refused: its profile cannot be read", error=str(exc))
            self.errors.note("-", f"reload refused: {exc}")
            self.systemd.reload_refused()
            return
        changed = self.supervisor.reconfigure(new, params, new.profile)
        self.broker.abort(changed, "reloading", "tcccd reloaded a config that changed this request's stages")
        self.profiles.reset("set in the config (reloaded)")
        self.governor.reset()
        if new.transcripts != old.transcripts:
            self.journal.use(reload.open_journal(new))
            self.log.info("reload: transcript journal reopened", enabled=new.transcripts.enabled)
        if new.wyoming != old.wyoming:
            problem = self.door.reopen()
            if problem is not None:
                self.errors.note("-", problem)
            self.log.info("reload: wyoming door reopened", enabled=new.wyoming.enabled, uri=new.wyoming.uri)
        self.systemd.reloaded()
        self.log.info("config reloaded", profile=new.profile, restarted_stages=sorted(changed))


def _make_dirs(d: cfg.DaemonSection) -> None:
    for path in (d.runtime_dir, d.state_dir, d.cache_dir):
        path.mkdir(parents=True, exist_ok=True)
    d.runtime_dir.chmod(0o700)
