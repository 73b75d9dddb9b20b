"""The memory budget in the config and in profiles, as an operator writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcccd import config as cfg
from tcccd.memory.budget import MIB, resolve_budget

PIPELINE = [{"name": "echo", "plugin": "passthrough"}]


def write_profiles(root: Path) -> Path:
    root.mkdir()
    (root / "field.yaml").write_text("description: balanced\n")
    (root / "training.yaml").write_text("description: economical\nmemory:\n  budget_mb: 700\n"
                                        "  unload_idle_after_s: 120\n")
    return root


def test_budget_follows_the_profile(tmp_path: Path) -> None:
    config = cfg.parse({"daemon": {"memory": {"budget_mb": 1500}}, "profiles_dir": str(write_profiles(tmp_path / "p")),
                        "pipeline": PIPELINE}, "test.yaml")
    field = config.daemon.memory.with_override(cfg.load_profile(config, "field").memory)
    training = config.daemon.memory.with_override(cfg.load_profile(config, "training").memory)
    assert resolve_budget(field, 8000 * MIB, None).bytes == 1500 * MIB
    assert resolve_budget(training, 8000 * MIB, None).bytes == 700 * MIB
    assert training.unload_idle_after_s == 120 and field.unload_idle_after_s is None


def test_a_bad_memory_setting_is_named_with_what_is_accepted(tmp_path: Path) -> None:
    with pytest.raises(cfg.ConfigError) as err:
        cfg.parse({"daemon": {"memory": {"budget_mb": -5, "budjet": 1}}, "pipeline": PIPELINE}, "test.yaml")
    text = str(err.value)
    assert "daemon.memory.budget_mb: expected an integer > 0 or null, got -5" in text
    assert "daemon.memory.budjet: unknown" in text and "budget_percent" in text


def test_a_profile_with_a_bad_budget_is_refused(tmp_path: Path) -> None:
    profiles = write_profiles(tmp_path / "p")
    (profiles / "field.yaml").write_text("memory:\n  budget_mb: 500\n  budget_percent: 30\n")
    with pytest.raises(cfg.ConfigError, match="budget_mb or budget_percent, not both"):
        cfg.parse({"profiles_dir": str(profiles), "pipeline": PIPELINE}, "test.yaml")


def test_the_embedded_default_has_a_budget() -> None:
    config = cfg.load()
    assert config.daemon.memory.enabled and config.daemon.host_root is None
