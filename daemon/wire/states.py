"""The states a worker (and each stage it hosts) can be in, as status reports them.

One enum instead of bare strings: the supervisor moves workers between these
states, the broker decides from them where a request may go, and `tcccd status`
shows them. The values are the wire's words (a `str` enum serialises as its
value), so a client reads `"ready"` as before.
"""

from __future__ import annotations

from enum import Enum


class WorkerState(str, Enum):
    STARTING = "starting"  # spawned, not yet ready
    READY = "ready"
    DEGRADED = "degraded"  # ready, but restarted within its restart window (or a plugin reports trouble)
    FAILED = "failed"  # restart budget spent: retried with a long backoff
    RESTARTING = "restarting"  # exited, restarting after a short backoff
    STOPPED = "stopped"
    UNLOADED = "unloaded"  # stopped by the memory capper while idle; loads again on demand
    LOADING = "loading"  # an unloaded worker starting again for a request

    def __str__(self) -> str:
        return self.value


SERVING = frozenset({WorkerState.READY, WorkerState.DEGRADED})
# A request may be routed to a stage in these states: an unloaded or loading one is held until it is ready.
ROUTABLE = SERVING | {WorkerState.UNLOADED, WorkerState.LOADING}
# Start-up is over for a worker in these states (READY=1 to systemd once every worker is in one).
SETTLED = SERVING | {WorkerState.FAILED, WorkerState.UNLOADED}
# A worker in these states must say `ready` within its stage's start_timeout_s (a failed one is being retried).
COMING_UP = frozenset({WorkerState.STARTING, WorkerState.RESTARTING, WorkerState.FAILED, WorkerState.LOADING})
# Healthy for `tcccd status`: idle unloaded workers load on demand.
HEALTHY = {WorkerState.READY, WorkerState.UNLOADED, WorkerState.LOADING}
