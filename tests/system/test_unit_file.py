"""The systemd units: systemd accepts them without a warning, rates tcccd.service's sandbox OK, parses the
devices the plugins open, and the unit's numbers agree with what the daemon does."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tcccd.config import DaemonSection, StageConfig

SYSTEMD_DIR = Path(__file__).resolve().parents[2] / "systemd"
UNIT_PATH = SYSTEMD_DIR / "tcccd.service"
HELPER_UNITS = ("tcccd-nvpmodel.socket", "tcccd-nvpmodel.service")
MAX_EXPOSURE = 2.0
UNIT_SECONDS = {"ms": 0.001, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600}
UNIT_BYTES = {"K": 1024, "M": 1024**2, "G": 1024**3}
# What the plugins open on the Orin Nano (L4T r36): ALSA for capture and playback; libcuda's nodes for the
# iGPU (nvmap for memory, nvhost-*/nvgpu for channels and control, host1x-fence for syncpoints) and DRM.
GPU_NODES = ("/dev/nvmap", "/dev/host1x-fence", "/dev/nvhost-ctrl", "/dev/nvhost-ctrl-gpu", "/dev/nvhost-gpu",
             "/dev/nvhost-as-gpu", "/dev/nvgpu/igpu0/ctrl", "/dev/nvgpu/igpu0/channel", "/dev/nvgpu/igpu0/as")

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
    return sum(float(n) * UNIT_SECONDS[u or "s"] for n, u in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", span))


def size_bytes(size: str) -> int:
    return int(size[:-1]) * UNIT_BYTES[size[-1]] if size[-1] in UNIT_BYTES else int(size)


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_unit(UNIT_PATH.read_text())


def one(unit: Unit, section: str, key: str) -> str:
    values = unit[section][key]
    assert len(values) == 1, f"[{section}] {key} set {len(values)} times: {values}"
    return values[0]


def with_local_exec_start(text: str) -> str:
    """/opt/tcccd/venv does not exist on a dev machine; point ExecStart at this venv's scripts instead."""
    local = Path(sys.executable).parent
    assert (local / "tcccd").exists(), f"{local}/tcccd missing: install tcccd into the venv (pip install -e .)"
    return text.replace("ExecStart=/opt/tcccd/venv/bin/", f"ExecStart={local}/")


def staged(tmp_path: Path, name: str, text: str | None = None) -> Path:
    path = tmp_path / name
    path.write_text(with_local_exec_start(text if text is not None else (SYSTEMD_DIR / name).read_text()))
    return path


def verify_stderr(*paths: Path) -> str:
    """systemd-analyze verify exits 0 on warnings, so its stderr is the verdict."""
    result = subprocess.run(["systemd-analyze", "verify", *map(str, paths)], capture_output=True, text=True,
                            timeout=60, cwd=paths[0].parent)
    return result.stderr.strip()


def exposure(path: Path) -> float:
    result = subprocess.run(["systemd-analyze", "security", "--offline=true", str(path)], capture_output=True,
                            text=True, timeout=60)
    if "--offline" in result.stderr and "unrecognized" in result.stderr:
        pytest.skip("this systemd-analyze has no --offline")
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)
    assert match, f"no exposure level in: {result.stdout[-500:]} {result.stderr[-500:]}"
    return float(match.group(1))


def device_acl(path: Path) -> dict[str, str]:
    """The device ACL as systemd itself parsed it (from `security --json`), node -> access."""
    import json

    result = subprocess.run(["systemd-analyze", "security", "--offline=true", "--json=short", str(path)],
                            capture_output=True, text=True, timeout=60)
    entry = next(e for e in json.loads(result.stdout) if e["name"] == "DeviceAllow=")
    devices = entry["description"].split(": ", 1)[1].split()
    return dict(device.rsplit(":", 1) for device in devices)


needs_systemd_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")


@needs_systemd_analyze
def test_systemd_analyze_verify_is_silent(tmp_path: Path) -> None:
    assert verify_stderr(staged(tmp_path, "tcccd.service")) == ""


@needs_systemd_analyze
def test_helper_units_verify_silently(tmp_path: Path) -> None:
    paths = [staged(tmp_path, name) for name in HELPER_UNITS]
    assert verify_stderr(*paths) == ""


@needs_systemd_analyze
def test_verify_would_catch_a_misspelt_directive(tmp_path: Path) -> None:
    text = UNIT_PATH.read_text().replace("ProtectHome=yes", "ProtectHom=yes")
    assert "Unknown key 'ProtectHom'" in verify_stderr(staged(tmp_path, "tcccd.service", text))


@needs_systemd_analyze
def test_security_exposure_is_ok(tmp_path: Path) -> None:
    score = exposure(staged(tmp_path, "tcccd.service"))
    assert score <= MAX_EXPOSURE, f"systemd-analyze security rates tcccd.service {score} (must be <= {MAX_EXPOSURE})"


@needs_systemd_analyze
def test_exposure_check_notices_a_weaker_sandbox(tmp_path: Path) -> None:
    weaker = "\n".join(line for line in UNIT_PATH.read_text().splitlines()
                       if not line.startswith(("CapabilityBoundingSet", "SystemCallFilter")))
    assert exposure(staged(tmp_path, "tcccd.service", weaker)) > MAX_EXPOSURE


@needs_systemd_analyze
def test_sound_and_gpu_devices_allowed_and_nothing_else(tmp_path: Path) -> None:
    acl = device_acl(staged(tmp_path, "tcccd.service"))
    assert acl.pop("char-alsa") == "rw" and acl.pop("char-drm") == "rw"
    assert acl.pop("char-rtc", "r") == "r", "only ProtectClock's read-only RTC may be added"
    assert set(GPU_NODES) <= set(acl), f"missing GPU nodes: {sorted(set(GPU_NODES) - set(acl))}"
    assert all(node.startswith(("/dev/nvhost-", "/dev/nvgpu/igpu0/", "/dev/nvmap", "/dev/host1x")) for node in acl)
    assert set(acl.values()) == {"rw"}, "the daemon reads and writes devices, never creates them (m)"


def test_daemon_uses_the_units_directories(unit: Unit, monkeypatch: pytest.MonkeyPatch) -> None:
    """systemd hands RuntimeDirectory= etc. over as $*_DIRECTORY; the daemon's defaults must follow them."""
    for key, env in (("RuntimeDirectory", "RUNTIME_DIRECTORY"), ("StateDirectory", "STATE_DIRECTORY"),
                     ("CacheDirectory", "CACHE_DIRECTORY")):
        monkeypatch.setenv(env, f"/run/{one(unit, 'Service', key)}-{env.lower()}")
    daemon = DaemonSection()
    assert (daemon.runtime_dir, daemon.state_dir, daemon.cache_dir) == (
        Path("/run/tcccd-runtime_directory"), Path("/run/tcccd-state_directory"), Path("/run/tcccd-cache_directory"))


def test_watchdog_outlasts_the_daemons_own_recovery(unit: Unit) -> None:
    """A frozen worker is replaced (hang_timeout_s) before systemd's watchdog would restart the whole daemon."""
    watchdog_s = seconds(one(unit, "Service", "WatchdogSec"))
    assert StageConfig(name="x", plugin="x").hang_timeout_s < watchdog_s
    assert one(unit, "Service", "Type") == "notify" and one(unit, "Service", "NotifyAccess") == "main"


def test_stop_timeout_covers_the_drain(unit: Unit) -> None:
    worker_stop_s = 5.0  # Daemon.shutdown gives workers 5 s after the drain
    assert seconds(one(unit, "Service", "TimeoutStopSec")) > DaemonSection().drain_timeout_s + worker_stop_s
    assert one(unit, "Service", "KillMode") == "mixed", "the daemon must drain before its workers are signalled"


def test_start_limit_stops_a_crash_loop(unit: Unit) -> None:
    burst = int(one(unit, "Unit", "StartLimitBurst"))
    interval_s = seconds(one(unit, "Unit", "StartLimitIntervalSec"))
    restart_s = seconds(one(unit, "Service", "RestartSec"))
    assert 2 <= burst <= 10
    assert interval_s > burst * restart_s, "the limit must be reachable by restarts spaced RestartSec apart"


def test_memory_budget_fits_the_orin_nano(unit: Unit) -> None:
    high = size_bytes(one(unit, "Service", "MemoryHigh"))
    limit = size_bytes(one(unit, "Service", "MemoryMax"))
    assert 2 * 1024**3 <= high < limit <= 7 * 1024**3


def test_helper_socket_is_for_group_tcccd_only() -> None:
    socket_unit = parse_unit((SYSTEMD_DIR / "tcccd-nvpmodel.socket").read_text())
    assert one(socket_unit, "Socket", "SocketGroup") == "tcccd"
    assert int(one(socket_unit, "Socket", "SocketMode"), 8) & 0o007 == 0, "no access for others"
    from tcccd.telemetry.settings import TelemetrySettings

    assert one(socket_unit, "Socket", "ListenStream") == TelemetrySettings().nvpmodel_socket
