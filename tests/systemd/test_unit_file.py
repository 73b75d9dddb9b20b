"""The systemd unit: systemd accepts it without a warning, and it says what the service needs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

UNIT_PATH = Path(__file__).resolve().parents[2] / "systemd" / "tcccd.service"
EXEC_START = "/opt/tcccd/venv/bin/tcccd run --config /etc/tcccd/tcccd.yaml"
UNIT_SECONDS = {"ms": 0.001, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600}
UNIT_BYTES = {"K": 1024, "M": 1024**2, "G": 1024**3}

Unit = dict[str, dict[str, list[str]]]


def parse_unit(text: str) -> Unit:
    """Sections -> key -> every value given (DeviceAllow and Environment repeat)."""
    unit: Unit = defaultdict(lambda: defaultdict(list))
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        unit[section][key.strip()].append(value.strip())
    return unit


def seconds(span: str) -> float:
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", span):
        total += float(number) * UNIT_SECONDS[unit or "s"]
    return total


def size_bytes(size: str) -> int:
    return int(size[:-1]) * UNIT_BYTES[size[-1]] if size[-1] in UNIT_BYTES else int(size)


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_unit(UNIT_PATH.read_text())


def one(unit: Unit, section: str, key: str) -> str:
    values = unit[section][key]
    assert len(values) == 1, f"[{section}] {key} set {len(values)} times: {values}"
    return values[0]


def verify_stderr(unit_text: str, tmp_path: Path) -> str:
    """systemd-analyze verify exits 0 on warnings, so its stderr is the verdict."""
    path = tmp_path / "tcccd.service"
    path.write_text(unit_text)
    result = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60)
    return result.stderr.strip()


def with_local_exec_start(text: str) -> str:
    """/opt/tcccd/venv does not exist on a dev machine; point ExecStart at this venv's tcccd instead."""
    local = Path(sys.executable).parent / "tcccd"
    assert local.exists(), f"{local} missing: install tcccd into the venv (pip install -e .)"
    return text.replace("ExecStart=/opt/tcccd/venv/bin/tcccd", f"ExecStart={local}")


needs_systemd_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")


@needs_systemd_analyze
def test_systemd_analyze_verify_is_silent(tmp_path: Path) -> None:
    assert verify_stderr(with_local_exec_start(UNIT_PATH.read_text()), tmp_path) == ""


@needs_systemd_analyze
def test_verify_would_catch_a_misspelt_directive(tmp_path: Path) -> None:
    text = with_local_exec_start(UNIT_PATH.read_text()).replace("ProtectHome=yes", "ProtectHom=yes")
    assert "Unknown key 'ProtectHom'" in verify_stderr(text, tmp_path)


def test_start_and_reload_commands(unit: Unit) -> None:
    assert one(unit, "Service", "ExecStart") == EXEC_START
    reload_command = one(unit, "Service", "ExecReload").split()
    assert reload_command[0] in ("/bin/kill", "/usr/bin/kill") and reload_command[1:] == ["-HUP", "$MAINPID"]


def test_notify_watchdog_and_restart(unit: Unit) -> None:
    service = "Service"
    assert one(unit, service, "Type") == "notify"
    assert one(unit, service, "NotifyAccess") == "main"
    assert 10 <= seconds(one(unit, service, "WatchdogSec")) <= 120
    assert one(unit, service, "Restart") == "on-failure"
    assert 1 <= seconds(one(unit, service, "RestartSec")) <= 60
    assert seconds(one(unit, service, "TimeoutStartSec")) >= 10 * 60, "first-boot engine builds need minutes"
    assert 10 < seconds(one(unit, service, "TimeoutStopSec")) <= 120
    assert one(unit, service, "KillMode") == "mixed", "the daemon must drain before its workers are signalled"
    assert one(unit, service, "RestartPreventExitStatus") == "2", "tcccd run exits 2 on an invalid config"


def test_start_limit_stops_a_crash_loop(unit: Unit) -> None:
    burst = int(one(unit, "Unit", "StartLimitBurst"))
    interval_s = seconds(one(unit, "Unit", "StartLimitIntervalSec"))
    restart_s = seconds(one(unit, "Service", "RestartSec"))
    assert 2 <= burst <= 10
    assert interval_s > burst * restart_s, "the limit must be reachable by restarts spaced RestartSec apart"


def test_dedicated_user_and_directories(unit: Unit) -> None:
    assert one(unit, "Service", "User") == "tcccd"
    assert one(unit, "Service", "Group") == "tcccd"
    assert {"audio", "video"} <= set(one(unit, "Service", "SupplementaryGroups").split())
    for key in ("RuntimeDirectory", "StateDirectory", "CacheDirectory"):
        assert one(unit, "Service", key) == "tcccd"


def test_memory_budget_fits_the_orin_nano(unit: Unit) -> None:
    high = size_bytes(one(unit, "Service", "MemoryHigh"))
    limit = size_bytes(one(unit, "Service", "MemoryMax"))
    assert 2 * 1024**3 <= high < limit <= 7 * 1024**3


def test_hardening(unit: Unit) -> None:
    expected = {"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
                "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectControlGroups": "yes",
                "DevicePolicy": "closed"}
    assert {key: one(unit, "Service", key) for key in expected} == expected
    families = set(one(unit, "Service", "RestrictAddressFamilies").split())
    assert {"AF_UNIX", "AF_INET"} <= families <= {"AF_UNIX", "AF_INET", "AF_INET6"}
    assert "PrivateDevices" not in unit["Service"], "PrivateDevices would hide the sound card and the GPU"


def test_devices_for_sound_and_jetson_gpu(unit: Unit) -> None:
    allowed = {value.split()[0]: value.split()[1] for value in unit["Service"]["DeviceAllow"]}
    assert allowed["char-alsa"] == "rw"
    assert allowed["/dev/nvmap"] == "rw"
    gpu_nodes = [node for node in allowed if node.startswith(("/dev/nvhost-", "/dev/nvgpu/"))]
    assert "/dev/nvhost-ctrl-gpu" in gpu_nodes and "/dev/nvhost-gpu" in gpu_nodes
    assert all(allowed[node] == "rw" for node in gpu_nodes)
    assert all("m" not in mode for mode in allowed.values()), "the daemon never creates device nodes"


def test_enabled_at_boot(unit: Unit) -> None:
    assert one(unit, "Install", "WantedBy") == "multi-user.target"
