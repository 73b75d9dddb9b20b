"""How much memory tcccd may use, and each worker's share of it.

The budget comes from the daemon section (`memory.budget_mb`, or
`memory.budget_percent` of RAM) and a profile may override it: a profile that
keeps every model resident needs more than one that unloads idle ones. The
budget never exceeds the cgroup's own limit (systemd's MemoryMax): past that
line the kernel kills instead of asking.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, model_validator

MIB = 2**20
DEFAULT_BUDGET_PERCENT = 50.0
DEFAULT_STEP_DOWN = ("emergency", "field", "training")


class BudgetOverride(BaseModel):
    """What a profile may change in the memory settings (profiles/*.yaml, key `memory`)."""

    model_config = ConfigDict(extra="forbid")

    budget_mb: int | None = Field(None, gt=0, description="budget in MiB; wins over budget_percent")
    budget_percent: float | None = Field(None, gt=0, le=100, description="budget as a share of RAM")
    unload_idle_after_s: float | None = Field(
        None, gt=0, description="unload a plugin idle this long even within budget (null: only when over it)")

    @model_validator(mode="after")
    def _one_budget(self) -> BudgetOverride:
        if self.budget_mb is not None and self.budget_percent is not None:
            raise ValueError("set budget_mb or budget_percent, not both")
        return self


class MemorySettings(BudgetOverride):
    """The daemon section's `memory`: the budget and how the capper enforces it."""

    enabled: bool = Field(True, description="false: measure and report only, never act")
    interval_s: float = Field(1.0, gt=0, description="how often memory is read and the policy run")
    release_at_percent: float = Field(85.0, gt=0, le=100, description="ask every worker to release above this "
                                                                      "share of the budget")
    resume_at_percent: float = Field(90.0, gt=0, le=100, description="take new work again below this share "
                                                                     "after refusing it")
    worker_share_mb: dict[str, int] = Field(default_factory=dict, description="worker -> share in MiB; "
                                            "workers not named split the rest of the budget equally")
    release_cooldown_s: float = Field(15.0, gt=0, description="least time between two release requests "
                                                              "to one worker")
    idle_before_unload_s: float = Field(20.0, ge=0, description="a worker idle this long may be unloaded "
                                                                "when over budget")
    settle_s: float = Field(2.0, ge=0, description="time an action gets to show its effect before the "
                                                   "next, dearer one")
    pressure_percent: float = Field(25.0, gt=0, le=100, description="PSI 'some' avg10 above this counts as "
                                                                    "over budget")
    min_available_percent: float = Field(5.0, ge=0, le=100, description="MemAvailable below this share of RAM "
                                                                        "counts as over budget")
    step_down: list[str] = Field(default_factory=lambda: list(DEFAULT_STEP_DOWN),
                                 description="profiles from the most memory to the least; the capper steps "
                                             "along it")

    def with_override(self, override: BudgetOverride | None) -> MemorySettings:
        """These settings with a profile's override laid over them."""
        if override is None:
            return self
        changes = override.model_dump(exclude_none=True)
        if "budget_mb" in changes or "budget_percent" in changes:
            changes.setdefault("budget_mb", None)
            changes.setdefault("budget_percent", None)
        return self.model_copy(update=changes)


@dataclass(frozen=True)
class Budget:
    bytes: int
    source: str  # says where the figure came from, for status and logs


def resolve_budget(settings: MemorySettings, total_ram_bytes: int, cgroup_limit_bytes: int | None) -> Budget:
    if settings.budget_mb is not None:
        budget = Budget(settings.budget_mb * MIB, f"budget_mb={settings.budget_mb}")
    else:
        percent = settings.budget_percent or DEFAULT_BUDGET_PERCENT
        budget = Budget(int(total_ram_bytes * percent / 100), f"{percent:g}% of {total_ram_bytes // MIB} MiB RAM")
    if cgroup_limit_bytes is not None and cgroup_limit_bytes < budget.bytes:
        return Budget(cgroup_limit_bytes, f"cgroup limit {cgroup_limit_bytes // MIB} MiB (below {budget.source})")
    return budget


def worker_shares(settings: MemorySettings, workers: list[str], budget_bytes: int,
                  daemon_bytes: int) -> dict[str, int]:
    """Each worker's share: its configured MiB, or an equal part of what the named ones and the daemon leave."""
    named = {w: settings.worker_share_mb[w] * MIB for w in workers if w in settings.worker_share_mb}
    rest = [w for w in workers if w not in named]
    if rest:
        left = max(0, budget_bytes - daemon_bytes - sum(named.values()))
        named.update(dict.fromkeys(rest, left // len(rest)))
    return named


def next_profile_down(settings: MemorySettings, profile: str, available: list[str]) -> str | None:
    """The profile after `profile` in the step-down order that exists, or None at the end of the line."""
    order = settings.step_down
    if profile not in order:
        return None
    return next((p for p in order[order.index(profile) + 1:] if p in available), None)
