"""The capper's decision: from one set of readings, the cheapest action that can help.

A pure function of the readings, the settings and what was done before, so
every rule is tested without processes. The ladder, cheapest first:

1. `release`: ask workers to give back what they hold but do not need
   (malloc_trim, ONNX Runtime arenas, caches). Costs milliseconds; done for a
   worker past its share even within budget, and for all above
   `release_at_percent`.
2. `unload`: stop an idle worker; its next request loads it again and waits.
3. `step_down`: switch to the next profile of `step_down`, which needs less.
4. `refuse`: take no new work (`busy`, code `memory`) until use is back under
   `resume_at_percent`. Accepted requests always finish.

Over budget means: use above the budget, PSI stall time above
`pressure_percent`, or MemAvailable below `min_available_percent`. After an
action the next one waits `settle_s`, so a trim gets to show its effect
before a model is unloaded for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tcccd.memory.budget import MIB, MemorySettings

ACTIONS = ("release", "unload", "step_down", "refuse", "resume")
GROWTH_BEFORE_ASKING_AGAIN = 1.05


@dataclass(frozen=True)
class WorkerUse:
    """One worker as the capper sees it. idle_s is None while it has work queued or running."""

    name: str
    used_bytes: int
    share_bytes: int
    idle_s: float | None
    loaded: bool = True


@dataclass(frozen=True)
class Readings:
    budget_bytes: int
    used_bytes: int
    workers: tuple[WorkerUse, ...]
    total_ram_bytes: int | None = None
    available_bytes: int | None = None
    pressure_some_avg10: float | None = None
    next_profile: str | None = None


@dataclass
class CapperState:
    """What the policy remembers between ticks."""

    last_action_at: float = float("-inf")
    released_at: dict[str, float] = field(default_factory=dict)
    released_use: dict[str, int] = field(default_factory=dict)  # a worker's use when last asked to release
    refusing: bool = False


@dataclass(frozen=True)
class Decision:
    action: str
    targets: tuple[str, ...]
    reason: str


def over_budget(readings: Readings, settings: MemorySettings) -> str | None:
    """Why the box is over budget, or None when it is not."""
    if readings.used_bytes > readings.budget_bytes:
        return f"use {readings.used_bytes // MIB} MiB is over the budget of {readings.budget_bytes // MIB} MiB"
    if readings.pressure_some_avg10 is not None and readings.pressure_some_avg10 > settings.pressure_percent:
        return (f"memory pressure: tasks stalled {readings.pressure_some_avg10:.1f}% of the last 10 s "
                f"(pressure_percent={settings.pressure_percent:g})")
    if readings.available_bytes is not None and readings.total_ram_bytes:
        floor = readings.total_ram_bytes * settings.min_available_percent / 100
        if readings.available_bytes < floor:
            return (f"only {readings.available_bytes // MIB} MiB of RAM available "
                    f"(min_available_percent={settings.min_available_percent:g})")
    return None


def decide(readings: Readings, state: CapperState, settings: MemorySettings, now: float) -> Decision | None:
    """The one action to take now, or None. The caller records it with `record`."""
    over = over_budget(readings, settings)
    resume_bytes = readings.budget_bytes * settings.resume_at_percent / 100
    if state.refusing and over is None and readings.used_bytes <= resume_bytes:
        return Decision("resume", (), f"use {readings.used_bytes // MIB} MiB is back under "
                                      f"{settings.resume_at_percent:g}% of the budget")
    loaded = [w for w in readings.workers if w.loaded]
    never = float("-inf")
    releasable = [w for w in loaded if now - state.released_at.get(w.name, never) >= settings.release_cooldown_s]
    # Within budget, a worker past its share is asked again only once it has grown since it was last asked:
    # what it cannot give back is its working set, not a reason to ask every cooldown.
    past_share = [w for w in releasable if w.used_bytes > w.share_bytes
                  and w.used_bytes > state.released_use.get(w.name, 0) * GROWTH_BEFORE_ASKING_AGAIN]
    if past_share and over is None:
        return Decision("release", tuple(w.name for w in past_share),
                        "past its share: " + ", ".join(f"{w.name} {w.used_bytes // MIB}/{w.share_bytes // MIB} MiB"
                                                        for w in past_share))
    idle = sorted((w for w in loaded if w.idle_s is not None), key=lambda w: -(w.idle_s or 0.0))
    if over is None:
        return _within_budget(readings, settings, releasable, idle)
    if now - state.last_action_at < settings.settle_s:
        return None
    if releasable:
        return Decision("release", tuple(w.name for w in releasable), over)
    unloadable = [w for w in idle if (w.idle_s or 0.0) >= settings.idle_before_unload_s]
    if unloadable:
        return Decision("unload", (unloadable[0].name,), f"{over}; {unloadable[0].name} idle "
                                                         f"{unloadable[0].idle_s:.1f} s")
    if readings.next_profile is not None:
        return Decision("step_down", (readings.next_profile,), over)
    if not state.refusing:
        return Decision("refuse", (), over)
    return None


def _within_budget(readings: Readings, settings: MemorySettings, releasable: list[WorkerUse],
                   idle: list[WorkerUse]) -> Decision | None:
    """Under the budget: trim early when close to it, and unload long-idle plugins where the profile asks."""
    if releasable and readings.used_bytes > readings.budget_bytes * settings.release_at_percent / 100:
        return Decision("release", tuple(w.name for w in releasable),
                        f"use {readings.used_bytes // MIB} MiB is over {settings.release_at_percent:g}% of the "
                        f"budget of {readings.budget_bytes // MIB} MiB")
    limit_s = settings.unload_idle_after_s
    if limit_s is not None and idle and (idle[0].idle_s or 0.0) >= limit_s:
        return Decision("unload", (idle[0].name,), f"{idle[0].name} idle {idle[0].idle_s:.1f} s "
                                                   f"(unload_idle_after_s={limit_s:g})")
    return None


def record(decision: Decision, state: CapperState, readings: Readings, now: float) -> None:
    """Remember an action that was carried out."""
    state.last_action_at = now
    if decision.action == "release":
        use = {w.name: w.used_bytes for w in readings.workers}
        for name in decision.targets:
            state.released_at[name] = now
            state.released_use[name] = use.get(name, 0)
    elif decision.action == "unload":
        for name in decision.targets:  # it comes back as a fresh process
            state.released_at.pop(name, None)
            state.released_use.pop(name, None)
    elif decision.action == "refuse":
        state.refusing = True
    elif decision.action == "resume":
        state.refusing = False
