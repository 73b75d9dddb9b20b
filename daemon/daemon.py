"""The daemon's main loop: one thread, one poller, signals as messages.

Signal handlers do nothing but wake the poller (set_wakeup_fd), and the loop
reads the signal numbers like any other input, as gunicorn's arbiter does. The
loop serves worker control first, then worker output, then clients, so a
heartbeat never waits behind audio and replies go out before new work comes in.
"""

from __future__ import annotations

import collections
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

import psutil
import structlog
import zmq

from tcccd import __version__, status
from tcccd import config as cfg
from tcccd.broker import Broker
from tcccd.notify import Notifier
from tcccd.protocol import Message
from tcccd.supervisor import Supervisor, WorkerHandle

LOCAL_TYPES = ("status", "ping", "profile.get", "profile.set")
TICK_S = 0.05
WATCHDOG_GRACE_HEARTBEATS = 5
EXTEND_EVERY_S = 20.0


class Daemon:
    def __init__(self, config: cfg.Config, config_path: Path | None) -> None:
        self.config = config
        self.config_path = config_path
        self.log = structlog.get_logger()
        self.notifier = Notifier()
        self.ctx = zmq.Context()
        self.errors: collections.deque[dict[str, Any]] = collections.deque(maxlen=20)
        self.started_at = time.time()
        self.profile = {"name": config.profile, "reason": "set in the config", "since": time.time()}
        self.draining_until: float | None = None
        self.announced_ready = False
        self.last_watchdog_at = 0.0
        self.last_extend_at = 0.0
        self.supervisor = Supervisor(config, *self._stage_params(config, config.profile), self.on_worker_lost)
        self.broker = Broker(config, self.supervisor, self.publish, self.note_error)

    @staticmethod
    def _stage_params(config: cfg.Config, profile_name: str) -> tuple[dict[str, dict[str, Any]], str]:
        profile = cfg.load_profile(config, profile_name)
        return {s.name: cfg.stage_params(config, s, profile) for s in config.enabled_stages}, profile_name

    def note_error(self, request_id: str, text: str) -> None:
        self.errors.append({"ts": time.time(), "request_id": request_id, "message": text})

    def on_worker_lost(self, handle: WorkerHandle, reason: str) -> None:
        self.note_error("-", f"worker {handle.name}: {reason}")
        self.publish("alert", Message("alert", data={"worker": handle.name, "message": reason}))
        self.broker.worker_lost(handle, reason)

    def publish(self, topic: str, message: Message) -> None:
        self.events.send_multipart([topic.encode(), *message.to_frames()])

    def bind(self) -> None:
        d = self.config.daemon
        for path in (d.runtime_dir, d.state_dir, d.cache_dir):
            path.mkdir(parents=True, exist_ok=True)
        d.runtime_dir.chmod(0o700)
        self.events = self.ctx.socket(zmq.PUB)
        self.events.setsockopt(zmq.LINGER, 0)
        self.events.bind(d.events_endpoint)
        self.broker.bind(self.ctx)
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
        structlog.contextvars.bind_contextvars(profile=self.profile["name"])
        self.bind()
        wakeup = self.install_signals()
        self.supervisor.start_all()
        self.log.info("tcccd started", version=__version__, pid=os.getpid(),
                      client_endpoint=self.config.daemon.client_endpoint)
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
            self.tell_systemd(now)
            if self.draining_until is not None and (not self.broker.requests or now > self.draining_until):
                break
        return self.shutdown()

    def serve_sockets(self) -> None:
        """Drain what is waiting, control first: a heartbeat never queues behind audio."""
        sup, broker = self.supervisor, self.broker
        while sup.heartbeat.poll(0):
            sup.on_heartbeat(sup.heartbeat.recv_multipart())
        while sup.control.poll(0):
            sup.on_control(sup.control.recv_multipart())
        while sup.data.poll(0):
            broker.on_worker(sup.data.recv_multipart())
        for _ in range(256):
            if not broker.clients.poll(0):
                break
            frames = broker.clients.recv_multipart()
            message = broker.parse_client(frames)
            if message is None:
                continue
            with structlog.contextvars.bound_contextvars(request_id=message.id):
                if message.type in LOCAL_TYPES:
                    broker.reply(frames[0], self.answer_local(message))
                else:
                    broker.on_client(frames[0], message)

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
        self.notifier.stopping()
        self.broker.accepting = False
        self.draining_until = time.monotonic() + timeout_s

    def shutdown(self) -> int:
        self.notifier.stopping()
        self.broker.abort_all("shutting_down", "tcccd stopped before this request finished")
        self.supervisor.stop_all(timeout_s=5.0)
        signal.set_wakeup_fd(-1)
        self.ctx.destroy(linger=200)
        self.log.info("tcccd stopped")
        return 0

    def reload(self) -> None:
        """SIGHUP: take a new config if it is valid; otherwise keep running on the old one."""
        self.notifier.reloading()
        try:
            new = cfg.load(self.config_path)
        except cfg.ConfigError as exc:
            self.log.error("reload refused: the new config is invalid; the running one stays", error=str(exc))
            self.note_error("-", f"reload refused: {exc}")
            self.notifier.ready_after_reload(status.summary_line(self.report()))
            return
        if new.daemon != self.config.daemon:
            self.log.warning("daemon section changed: endpoints and directories take effect at the next restart")
            new = new.model_copy(update={"daemon": self.config.daemon})
        self.broker.abort_all("reloading", "tcccd reloaded its config while this request was running")
        self.config = self.broker.config = new
        self.supervisor.reconfigure(new, *self._stage_params(new, new.profile))
        self.profile = {"name": new.profile, "reason": "set in the config (reloaded)", "since": time.time()}
        self.announced_ready = False
        self.log.info("config reloaded", profile=new.profile)

    def tell_systemd(self, now: float) -> None:
        if not self.announced_ready and self.supervisor.settled():
            self.announced_ready = True
            self.notifier.ready(status.summary_line(self.report()))
        elif not self.announced_ready and now - self.last_extend_at >= EXTEND_EVERY_S:
            # A first-boot model export or engine build is still running: it is bounded by the stages'
            # start_timeout_s, so systemd's start timeout must not cut it short.
            self.last_extend_at = now
            self.notifier.extend_timeout(3 * EXTEND_EVERY_S)
        interval_s = self.notifier.watchdog_interval_s
        if interval_s and now - self.last_watchdog_at >= interval_s:
            grace_s = WATCHDOG_GRACE_HEARTBEATS * self.config.daemon.heartbeat_interval_s
            if self.supervisor.heartbeats_healthy(now, grace_s):
                self.last_watchdog_at = now
                self.notifier.watchdog()
            self.notifier.status(status.summary_line(self.report()))

    def answer_local(self, message: Message) -> Message:
        if message.type == "ping":
            return message.reply("pong", final=True)
        if message.type == "status":
            return message.reply("status", self.report(), final=True)
        if message.type == "profile.get":
            return message.reply("profile", self.profile_info(), final=True)
        return self.set_profile(message)

    def profile_info(self) -> dict[str, Any]:
        return {**self.profile, "available": cfg.available_profiles(self.config)}

    def set_profile(self, message: Message) -> Message:
        name = message.data.get("name")
        if not isinstance(name, str) or not name:
            return message.error("bad_request", "profile.set needs data.name: the profile to switch to")
        try:
            profile = cfg.load_profile(self.config, name)
        except cfg.ConfigError as exc:
            return message.error("bad_profile", str(exc))
        problems = cfg.validate_stages(self.config, profile, name)
        if problems:
            return message.error("bad_profile", "; ".join(problems))
        reason = str(message.data.get("reason") or "set by a client")
        self.profile = {"name": name, "reason": reason, "since": time.time()}
        self.supervisor.profile = name
        for handle in self.supervisor.workers.values():
            params = {}
            for stage in handle.stages:
                stage.params = cfg.stage_params(self.config, stage.config, profile)
                params[stage.config.name] = stage.params
            self.supervisor.send_control(handle, Message("profile", data={"profile": name, "params": params}))
        structlog.contextvars.bind_contextvars(profile=name)
        self.log.info("profile switched", reason=reason)
        self.publish("profile", Message("profile", data=self.profile_info()))
        return message.reply("profile", self.profile_info(), final=True)

    def report(self) -> dict[str, Any]:
        stages = []
        for handle in self.supervisor.workers.values():
            for stage in handle.stages:
                stages.append({
                    "name": stage.config.name, "plugin": stage.config.plugin, "worker": handle.name,
                    "state": status.stage_state(handle.state, stage.health), "pid": handle.info.get("pid"),
                    "restarts": handle.restarts, "queue_depth": stage.pending, "max_queue": stage.config.max_queue,
                    "dropped_audio_chunks": stage.dropped_audio_chunks, "busy_rejections": stage.busy_rejections,
                    "last_error": handle.last_error or stage.last_error or stage.health.get("last_error"),
                    "latency": stage.health.get("latency", {}), "rss_bytes": handle.info.get("rss_bytes"),
                    "peak_rss_bytes": handle.info.get("peak_rss_bytes"), "plugin_health": stage.health,
                })
        daemon_rss = psutil.Process().memory_info().rss
        worker_rss = sum(h.info.get("rss_bytes") or 0 for h in self.supervisor.workers.values() if h.alive)
        report = {
            "version": __version__, "pid": os.getpid(), "uptime_s": time.time() - self.started_at,
            "profile": self.profile, "stages": stages, "requests_in_flight": len(self.broker.requests),
            "memory": {"daemon_rss_bytes": daemon_rss, "total_rss_bytes": daemon_rss + worker_rss},
            "endpoints": {"client": self.config.daemon.client_endpoint, "events": self.config.daemon.events_endpoint},
            "last_errors": list(self.errors),
        }
        report["state"] = status.overall_state([s["state"] for s in stages], self.draining_until is not None)
        return report
