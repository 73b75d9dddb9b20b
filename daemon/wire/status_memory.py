"""The `memory` section of the status report: the daemon's and its workers' use, and the memory capper's view.

Apart from the rest of the report (tcccd.wire.status) because it is the largest
part and has one owner, the memory capper (tcccd.memory.capper, reported through
tcccd.governor.memory_hook). Every figure is optional: with the capper disabled, or
before its first reading, only the RSS figures and `enabled` are there.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tcccd.wire.model import Bool, Float, Int, Reply, Str


class Released(Reply):
    """What a worker freed when the capper asked it to release memory."""

    rss_before_bytes: Int | None = Field(None, description="the worker's RSS before")
    rss_after_bytes: Int | None = Field(None, description="its RSS after")
    freed_bytes: Int | None = Field(None, description="the difference, at least 0")
    malloc_trim: Bool | None = Field(None, description="whether the C library returned heap to the kernel")
    errors: dict[str, Str] = Field(default_factory=dict, description="per stage: why its plugin failed to release")


class WorkerMemory(Reply):
    pss_bytes: Int | None = Field(None, description="proportional set size (null when it cannot be read)")
    rss_bytes: Int | None = Field(None, description="resident set size (null when unloaded)")
    gpu_bytes: Int | None = Field(None, description="what the worker's GPU allocator holds")
    used_bytes: Int | None = Field(None, description="what counts against the budget: PSS plus GPU bytes")
    share_bytes: Int | None = Field(None, description="its share of the budget")
    loaded: Bool | None = Field(None, description="false while unloaded to save memory")
    idle_s: Float | None = Field(None, description="seconds since it last served a request")
    last_release: Released | None = Field(None, description="what it freed when last asked to release")


class CgroupMemory(Reply):
    version: Int = Field(description="cgroup version, 1 or 2")
    current_bytes: Int | None = Field(None, description="the cgroup's memory use")
    limit_bytes: Int | None = Field(None, description="its limit; null when unlimited")
    working_set_bytes: Int | None = Field(None, description="use minus inactive file pages")


class HostMemory(Reply):
    total_bytes: Int | None = Field(None, description="the host's RAM")
    available_bytes: Int | None = Field(None, description="MemAvailable")
    nvmap_used_bytes: Int | None = Field(None, description="Jetson GPU (nvmap) memory in use; null elsewhere")
    pressure_some_avg10: Float | None = Field(None, description="memory pressure (PSI some, 10 s average, %)")
    pressure_full_avg10: Float | None = Field(None, description="memory pressure (PSI full, 10 s average, %)")
    cgroup: CgroupMemory | None = Field(None, description="tcccd's cgroup, when it has one")


class CapperAction(Reply):
    """One action of the memory capper; also published as an `alert` of kind `memory` (MemoryAlert)."""

    action: Literal["release", "unload", "step_down", "refuse", "resume"] = Field(description="what it did")
    targets: list[Str] = Field(description="the workers or profile it acted on")
    reason: Str = Field(description="why")
    ts: Float = Field(description="when (epoch seconds)")
    used_bytes: Int | None = Field(None, description="use when it acted")
    budget_bytes: Int | None = Field(None, description="the budget when it acted")


class MemoryStatus(Reply):
    daemon_rss_bytes: Int = Field(description="the daemon process's RSS")
    total_rss_bytes: Int = Field(description="the daemon's and its live workers' RSS")
    enabled: Bool = Field(description="whether the memory capper acts")
    budget_bytes: Int | None = Field(None, description="the memory budget")
    budget_source: Str | None = Field(None, description="where the budget comes from (config, RAM share, cgroup)")
    used_bytes: Int | None = Field(None, description="PSS of the daemon and its workers plus their GPU bytes")
    headroom_bytes: Int | None = Field(None, description="budget minus use")
    daemon_bytes: Int | None = Field(None, description="the daemon's own PSS")
    over_budget: Str | None = Field(None, description="why use is over the budget, or null")
    refusing: Str | None = Field(None, description="why new requests are refused (`busy`), or null")
    last_action: CapperAction | None = Field(None, description="what the capper did last")
    workers: dict[Str, WorkerMemory] = Field(default_factory=dict, description="per worker, by name")
    host: HostMemory | None = Field(None, description="the host's memory")
