"""What the kernel says about memory, read under a host root that tests can move.

Every path is relative to `host_root` (`/` on a real box; a temporary tree in
tests), the same root telemetry reads sysfs under. Each reader returns None, or
a reading with None fields, for what it cannot read: a missing figure is
reported as missing, never invented. Units are bytes throughout; the kernel's
kB are KiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KIB = 1024
# cgroup v1 reports "no limit" as the largest page-aligned signed 64-bit number.
V1_UNLIMITED_BYTES = 2**62


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _kib_fields(text: str) -> dict[str, int]:
    """`Name:   123 kB` lines (meminfo, smaps_rollup) as bytes; lines that do not parse are skipped."""
    fields: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            fields[name.strip()] = int(parts[0]) * (KIB if parts[1:2] == ["kB"] else 1)
    return fields


@dataclass(frozen=True)
class MemInfo:
    """System-wide memory from proc/meminfo; nvmap_used_bytes is the Jetson's CUDA/unified memory."""

    total_bytes: int
    available_bytes: int | None
    nvmap_used_bytes: int | None


def read_meminfo(host_root: Path) -> MemInfo | None:
    text = _read(host_root / "proc" / "meminfo")
    if text is None:
        return None
    fields = _kib_fields(text)
    if "MemTotal" not in fields:
        return None
    return MemInfo(fields["MemTotal"], fields.get("MemAvailable"), fields.get("NvMapMemUsed"))


@dataclass(frozen=True)
class Pressure:
    """PSI: the share of time (percent) some / all tasks stalled on memory, over 10 and 60 s."""

    some_avg10: float
    some_avg60: float
    full_avg10: float
    full_avg60: float


def read_pressure(host_root: Path) -> Pressure | None:
    """proc/pressure/memory, or None where the kernel has no PSI (CONFIG_PSI off, or psi=0)."""
    text = _read(host_root / "proc" / "pressure" / "memory")
    if text is None:
        return None
    lines: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        kind, *pairs = line.split()
        try:
            lines[kind] = {k: float(v) for k, v in (p.split("=", 1) for p in pairs)}
        except ValueError:
            return None
    some, full = lines.get("some", {}), lines.get("full", {})
    if "avg10" not in some:
        return None
    return Pressure(some["avg10"], some.get("avg60", 0.0), full.get("avg10", 0.0), full.get("avg60", 0.0))


@dataclass(frozen=True)
class CgroupMemory:
    """The memory cgroup tcccd runs in: what it is charged (page cache included), its limit, and
    the working set (charge minus inactive file pages, which the kernel drops before anything else)."""

    version: int
    path: str
    current_bytes: int
    limit_bytes: int | None
    working_set_bytes: int


def _own_cgroups(host_root: Path) -> dict[str, str]:
    """proc/self/cgroup as {controller: path}; v2's unified entry is keyed ''."""
    text = _read(host_root / "proc" / "self" / "cgroup") or ""
    groups: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                groups[controller] = parts[2]
    return groups


def _cgroup_dir(base: Path, path: str, probe: str) -> Path | None:
    """Our group's directory, or the hierarchy's root where a namespace hides the path."""
    for candidate in (base / path.lstrip("/"), base):
        if (candidate / probe).is_file():
            return candidate
    return None


def _inactive_file_bytes(directory: Path, key: str) -> int:
    text = _read(directory / "memory.stat") or ""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _int_file(path: Path) -> int | None:
    text = (_read(path) or "").strip()
    return int(text) if text.isdigit() else None


def read_cgroup(host_root: Path) -> CgroupMemory | None:
    """cgroup v2 (memory.current/memory.max, also under `unified/` on hybrid hosts), else v1
    (memory.usage_in_bytes/memory.limit_in_bytes); None when neither is readable."""
    groups = _own_cgroups(host_root)
    fs = host_root / "sys" / "fs" / "cgroup"
    if "memory" in groups:
        directory = _cgroup_dir(fs / "memory", groups["memory"], "memory.usage_in_bytes")
        current = _int_file(directory / "memory.usage_in_bytes") if directory else None
        if directory is not None and current is not None:
            limit = _int_file(directory / "memory.limit_in_bytes")
            limit = None if limit is None or limit >= V1_UNLIMITED_BYTES else limit
            inactive = _inactive_file_bytes(directory, "total_inactive_file")
            return CgroupMemory(1, groups["memory"], current, limit, max(0, current - inactive))
    path = groups.get("", "/")
    for base in (fs, fs / "unified"):
        directory = _cgroup_dir(base, path, "memory.current")
        current = _int_file(directory / "memory.current") if directory else None
        if directory is not None and current is not None:
            limit = _int_file(directory / "memory.max")  # "max" (no limit) is not a number: None
            inactive = _inactive_file_bytes(directory, "inactive_file")
            return CgroupMemory(2, path, current, limit, max(0, current - inactive))
    return None


@dataclass(frozen=True)
class ProcessMemory:
    """One process: RSS counts shared pages fully in each process, PSS splits them among their users,
    so the PSS of all workers adds up to what they really cost together."""

    pid: int
    rss_bytes: int
    pss_bytes: int
    swap_bytes: int


def read_process(host_root: Path, pid: int) -> ProcessMemory | None:
    """proc/PID/smaps_rollup (Linux 4.14+); None for a process that is gone or unreadable."""
    text = _read(host_root / "proc" / str(pid) / "smaps_rollup")
    if text is None:
        return None
    fields = _kib_fields(text)
    if "Rss" not in fields or "Pss" not in fields:
        return None
    return ProcessMemory(pid, fields["Rss"], fields["Pss"], fields.get("Swap", 0))
