"""Config validation: every fault names the file, the key path and what is accepted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tcccd import config as cfg
from tests.support.daemon import REPO, SLOW


def check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tcccd", "config", "check", str(path)], capture_output=True,
                          text=True, timeout=60, cwd=REPO)


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_embedded_default_is_valid_and_has_profiles():
    config = cfg.load()
    assert config.profile in cfg.available_profiles(config)
    assert {"emergency", "field", "training"} <= set(cfg.available_profiles(config))


def test_wrong_type_names_file_key_path_and_expectation(tmp_path: Path):
    pipeline = [{"name": "a", "plugin": "passthrough"}, {"name": "b", "plugin": "passthrough"},
                {"name": "c", "plugin": SLOW, "params": {"beam_size": "five"}}]
    path = write(tmp_path, {"pipeline": pipeline})
    result = check(path)
    assert result.returncode == 2
    assert f"{path}: pipeline[2].params.beam_size: expected an integer >= 1, got 'five'" in result.stderr


def test_unknown_keys_are_errors_with_the_accepted_ones(tmp_path: Path):
    path = write(tmp_path, {"daemon": {"log_levle": "info"}, "pipeline": [
        {"name": "a", "plugin": SLOW, "params": {"beem_size": 2}}]})
    with pytest.raises(cfg.ConfigError) as failure:
        cfg.load(path)
    problems = failure.value.problems
    assert any(p.startswith("daemon.log_levle: unknown key") and "log_level" in p for p in problems)


def test_unknown_params_key_is_an_error(tmp_path: Path):
    path = write(tmp_path, {"pipeline": [{"name": "a", "plugin": SLOW, "params": {"beem_size": 2}}]})
    with pytest.raises(cfg.ConfigError, match=r"pipeline\[0\]\.params\.beem_size: unknown key .*beam_size"):
        cfg.load(path)


@pytest.mark.parametrize("data, expected", [
    ({"pipeline": [{"name": "a", "plugin": "nonesuch"}]}, "pipeline[0].plugin: no plugin named 'nonesuch'"),
    ({"pipeline": [{"name": "a", "plugin": "passthrough"}], "routes": {"echo": ["b"]}}, "routes.echo names stages"),
    ({"profile": "beach"}, "profile 'beach' not found"),
    ({"daemon": {"heartbeat_interval_s": -1}}, "daemon.heartbeat_interval_s: expected a number > 0, got -1"),
    ({"pipeline": [{"name": "Bad Name", "plugin": "passthrough"}]}, "pipeline[0].name: expected a string matching"),
])
def test_each_fault_is_explained(tmp_path: Path, data: dict, expected: str):
    with pytest.raises(cfg.ConfigError) as failure:
        cfg.load(write(tmp_path, data))
    assert expected in str(failure.value)


def test_not_yaml_and_missing_file(tmp_path: Path):
    path = tmp_path / "x.yaml"
    path.write_text("pipeline: [unclosed")
    assert "not valid YAML" in check(path).stderr
    assert "cannot read" in check(tmp_path / "missing.yaml").stderr


def test_run_refuses_bad_config_with_the_message(tmp_path: Path):
    path = write(tmp_path, {"pipeline": [{"name": "c", "plugin": SLOW, "params": {"beam_size": "five"}}]})
    result = subprocess.run([sys.executable, "-m", "tcccd", "--config", str(path), "run"], capture_output=True,
                            text=True, timeout=60, cwd=REPO)
    assert result.returncode == 2
    assert "pipeline[0].params.beam_size: expected an integer >= 1, got 'five'" in result.stderr


def test_config_check_accepts_a_good_file(tmp_path: Path):
    path = write(tmp_path, {"pipeline": [{"name": "a", "plugin": "passthrough"}], "routes": {"echo": ["a"]}})
    result = check(path)
    assert result.returncode == 0 and "OK" in result.stdout


@pytest.mark.parametrize("name", ["emergency", "field", "training"])
def test_shipped_profiles_fit_the_builtin_plugins(name: str):
    from tcccd.kit import registry

    config = cfg.load()
    profile = cfg.load_profile(config, name)
    assert profile.description
    for plugin, overlay in profile.plugins.items():
        params_cls = registry.load(plugin).Params
        required = {k: "/nonexistent" for k, f in params_cls.model_fields.items() if f.is_required()}
        params_cls.model_validate({**required, **overlay})


def test_validating_the_default_config_imports_no_model_runtime():
    """The daemon process validates every plugin's params; it must not load torch or onnxruntime to do it."""
    code = ("import sys; from tcccd import config; from tcccd.kit import registry; config.load(); "
            "[registry.load(n) for n in registry.installed()]; "
            "print(sorted(m for m in ('torch', 'onnxruntime', 'ctranslate2', 'piper', 'snac') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
