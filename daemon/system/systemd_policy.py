"""When the daemon tells systemd what: READY once start-up settled, WATCHDOG while it can serve, STATUS always.

tcccd.system.notify sends the datagrams; this module decides. READY=1 waits until every
worker is ready or failed (a first-boot model export stretches the start
timeout with EXTEND_TIMEOUT_USEC meanwhile). WATCHDOG=1 vouches that every live
worker's heartbeat answers and that at least one stage can serve: when every
stage has failed, the watchdog stops, so systemd restarts the whole service,
which is the next remedy after the per-stage retries.
"""

from __future__ import annotations

from typing import Protocol

from tcccd.ports import ConfigSource
from tcccd.system.notify import Notifier

WATCHDOG_GRACE_HEARTBEATS = 5
EXTEND_EVERY_S = 20.0


class Workers(Protocol):
    """What the policy reads of the workers (tcccd.core.supervisor.Supervisor)."""

    def settled(self) -> bool: ...

    def heartbeats_healthy(self, now: float, grace_s: float) -> bool: ...

    def all_failed(self) -> bool: ...


class Summary(Protocol):
    """The one line STATUS= shows (tcccd.core.local_requests.LocalRequests)."""

    def summary_line(self) -> str: ...


class SystemdPolicy:
    def __init__(self, notifier: Notifier, supervisor: Workers, config: ConfigSource, status: Summary) -> None:
        self.notifier = notifier
        self.supervisor = supervisor
        self.config = config
        self.status = status
        self.announced_ready = False
        self.last_watchdog_at = 0.0
        self.last_extend_at = 0.0

    def tick(self, now: float) -> None:
        if not self.announced_ready and self.supervisor.settled():
            self.announced_ready = True
            self.notifier.ready(self.status.summary_line())
        elif not self.announced_ready and now - self.last_extend_at >= EXTEND_EVERY_S:
            # A first-boot model export or engine build is still running: it is bounded by the stages'
            # start_timeout_s, so systemd's start timeout must not cut it short.
            self.last_extend_at = now
            self.notifier.extend_timeout(3 * EXTEND_EVERY_S)
        interval_s = self.notifier.watchdog_interval_s
        if interval_s and now - self.last_watchdog_at >= interval_s:
            if self.can_vouch(now):
                self.last_watchdog_at = now
                self.notifier.watchdog()
            self.notifier.status(self.status.summary_line())

    def can_vouch(self, now: float) -> bool:
        grace_s = WATCHDOG_GRACE_HEARTBEATS * self.config.current().daemon.heartbeat_interval_s
        return self.supervisor.heartbeats_healthy(now, grace_s) and not self.supervisor.all_failed()

    def reloading(self) -> None:
        self.notifier.reloading()

    def reloaded(self) -> None:
        """The reload is over (taken or refused): READY=1 again once the restarted stages settle."""
        self.announced_ready = False

    def reload_refused(self) -> None:
        self.notifier.ready_after_reload(self.status.summary_line())

    def stopping(self) -> None:
        self.notifier.stopping()
