"""The budget: from MiB or a share of RAM, overridden by a profile, capped by the cgroup; workers' shares."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tcccd.memory.budget import (
    MIB,
    BudgetOverride,
    MemorySettings,
    next_profile_down,
    resolve_budget,
    worker_shares,
)

GIB = 1024 * MIB
RAM_8G = 7802144 * 1024


def test_default_budget_is_half_the_ram() -> None:
    budget = resolve_budget(MemorySettings(), RAM_8G, None)
    assert budget.bytes == RAM_8G // 2 and "50% of" in budget.source


def test_budget_mb_wins_and_percent_works() -> None:
    assert resolve_budget(MemorySettings(budget_mb=1500), RAM_8G, None).bytes == 1500 * MIB
    assert resolve_budget(MemorySettings(budget_percent=25), 8 * GIB, None).bytes == 2 * GIB


def test_cgroup_limit_caps_the_budget() -> None:
    budget = resolve_budget(MemorySettings(budget_mb=8000), RAM_8G, 6 * GIB)
    assert budget.bytes == 6 * GIB and "cgroup limit" in budget.source
    assert resolve_budget(MemorySettings(budget_mb=1000), RAM_8G, 6 * GIB).bytes == 1000 * MIB


def test_profile_override_replaces_the_budget_and_keeps_the_rest() -> None:
    daemon = MemorySettings(budget_mb=3000, settle_s=7.0)
    training = daemon.with_override(BudgetOverride(budget_percent=20, unload_idle_after_s=60))
    assert training.budget_mb is None and training.budget_percent == 20 and training.settle_s == 7.0
    assert resolve_budget(training, 10 * GIB, None).bytes == 2 * GIB
    assert training.unload_idle_after_s == 60
    assert daemon.with_override(BudgetOverride()).budget_mb == 3000
    assert daemon.with_override(None) is daemon


def test_both_budgets_at_once_is_an_error_that_says_so() -> None:
    with pytest.raises(ValidationError, match="budget_mb or budget_percent, not both"):
        MemorySettings(budget_mb=100, budget_percent=10)
    with pytest.raises(ValidationError, match="less than or equal to 100"):
        BudgetOverride(budget_percent=150)


def test_shares_split_what_named_workers_and_the_daemon_leave() -> None:
    settings = MemorySettings(worker_share_mb={"asr": 600})
    shares = worker_shares(settings, ["asr", "piper", "snac"], budget_bytes=1000 * MIB, daemon_bytes=100 * MIB)
    assert shares == {"asr": 600 * MIB, "piper": 150 * MIB, "snac": 150 * MIB}


def test_shares_never_go_negative() -> None:
    shares = worker_shares(MemorySettings(worker_share_mb={"asr": 900}), ["asr", "piper"], 500 * MIB, 100 * MIB)
    assert shares == {"asr": 900 * MIB, "piper": 0}


def test_step_down_follows_the_order_and_skips_missing_profiles() -> None:
    settings = MemorySettings()
    assert next_profile_down(settings, "emergency", ["emergency", "field", "training"]) == "field"
    assert next_profile_down(settings, "emergency", ["emergency", "training"]) == "training"
    assert next_profile_down(settings, "training", ["emergency", "field", "training"]) is None
    assert next_profile_down(settings, "custom", ["custom", "training"]) is None
