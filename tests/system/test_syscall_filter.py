"""tcccd under the unit's own system call filter: ready, watchdog, a real ONNX Runtime voice, reload and stop.

systemd is not PID 1 here, so the filter is built the way systemd builds it: the unit's SystemCallFilter=
groups expanded by `systemd-analyze syscall-filter`, @default always allowed, anything else answered with
the unit's SystemCallErrorNumber=. It is loaded with libseccomp (pyseccomp) in the child before exec.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tcccd.wire.client import Client
from tests.system.test_daemon_notify import TCCCD, Systemd

pyseccomp = pytest.importorskip("pyseccomp", reason="pyseccomp (dev extra) loads the filter")
UNIT = Path(__file__).resolve().parents[2] / "systemd" / "tcccd.service"
CONFIG = """
daemon:
  client_endpoint: ipc://{run}/client.sock
  events_endpoint: tcp://127.0.0.1:{port}
  heartbeat_interval_s: 0.2
  drain_timeout_s: 5
pipeline:
  - name: echo
    plugin: passthrough
  - name: piper
    plugin: piper
routes:
  echo: [echo]
  speak: [piper]
"""


def syscall_groups() -> dict[str, list[str]]:
    text = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, timeout=60).stdout
    groups: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif line.strip() and not line.strip().startswith("#") and groups:
            current.append(line.strip())
    return groups


def expand(entry: str, groups: dict[str, list[str]]) -> set[str]:
    if not entry.startswith("@"):
        return {entry}
    return set().union(*(expand(member, groups) for member in groups[entry]))


def unit_allow_list() -> set[str]:
    """What SystemCallFilter= lines of the unit allow: allow-list entries minus `~` deny entries, plus @default."""
    groups = syscall_groups()
    allowed, denied = expand("@default", groups), set()
    for value in re.findall(r"^SystemCallFilter=(.+)$", UNIT.read_text(), re.MULTILINE):
        target = denied if value.startswith("~") else allowed
        for entry in value.lstrip("~").split():
            target |= expand(entry, groups)
    return allowed - denied


def seccomp_filter() -> object:
    number = re.search(r"^SystemCallErrorNumber=(\w+)$", UNIT.read_text(), re.MULTILINE)
    assert number, "the unit must answer filtered calls with an error, not kill the daemon"
    rules = pyseccomp.SyscallFilter(defaction=pyseccomp.ERRNO(getattr(errno, number.group(1))))
    for name in sorted(unit_allow_list()):
        with contextlib.suppress(ValueError, RuntimeError, OSError):  # a call this architecture does not have
            rules.add_rule(pyseccomp.ALLOW, name)
    return rules


needs_tools = pytest.mark.skipif(shutil.which("systemd-analyze") is None or not TCCCD.exists(),
                                 reason="needs systemd-analyze and tcccd installed in the venv")


@needs_tools
def test_the_filter_is_really_loaded() -> None:
    rules = seccomp_filter()
    probe = subprocess.run([sys.executable, "-c", "import os; os.chroot('/')"], preexec_fn=rules.load,
                           capture_output=True, text=True, timeout=60)
    assert "PermissionError" in probe.stderr, "chroot (@privileged) must be refused under the unit's filter"


@needs_tools
def test_daemon_runs_under_the_units_filter(tmp_path: Path) -> None:
    from tests.support.daemon import free_port

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = tmp_path / "tcccd.yaml"
    config.write_text(CONFIG.format(run=run_dir, port=free_port()))
    systemd = Systemd(tmp_path / "notify.sock")
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify.sock"), "WATCHDOG_USEC": "1000000",
           "RUNTIME_DIRECTORY": str(run_dir), "STATE_DIRECTORY": str(tmp_path / "state"),
           "CACHE_DIRECTORY": str(tmp_path / "cache"), "TCCCD_HOST_ROOT": str(tmp_path)}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen([str(TCCCD), "run", "--config", str(config)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, preexec_fn=seccomp_filter().load)
    systemd.proc = proc
    try:
        assert "2/2 plugins ready" in systemd.wait_for("READY")["STATUS"]
        assert systemd.wait_for("WATCHDOG")["WATCHDOG"] == "1"
        with Client(f"ipc://{run_dir}/client.sock", timeout_s=60) as client:
            assert client.call("echo", {"n": 3}).data["n"] == 3
            audio = [m for m in client.speak("Hello.", deadline_s=60) if m.payload]
            assert audio and sum(len(m.payload) for m in audio) > 1000
            events = client.subscribe(["profile"])
            assert client.profile_set("training").name == "training"
            assert events.next(10) is not None, "events reach a subscriber over loopback TCP"
        proc.send_signal(signal.SIGHUP)
        assert "2/2 plugins ready" in systemd.wait_for("READY")["STATUS"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        systemd.sock.close()
