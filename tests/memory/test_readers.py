"""The kernel's memory figures read from fake host trees: what a real box shows, and what breaks."""

from __future__ import annotations

from pathlib import Path

from tcccd.memory import readers
from tests.memory import hosts

KIB = 1024


def test_orin_meminfo_includes_unified_gpu_memory(tmp_path: Path) -> None:
    info = readers.read_meminfo(hosts.orin_nano(tmp_path))
    assert info == readers.MemInfo(7802144 * KIB, 2731400 * KIB, 1254400 * KIB)


def test_meminfo_without_nvmap_is_a_plain_linux_box(tmp_path: Path) -> None:
    hosts.write(tmp_path, "proc/meminfo", "MemTotal: 16000000 kB\nMemFree: 1000 kB\nMemAvailable: 8000000 kB\n")
    info = readers.read_meminfo(tmp_path)
    assert info is not None and info.nvmap_used_bytes is None and info.available_bytes == 8000000 * KIB


def test_missing_or_garbled_meminfo_reads_as_none(tmp_path: Path) -> None:
    assert readers.read_meminfo(tmp_path) is None
    hosts.write(tmp_path, "proc/meminfo", "this is not meminfo\n")
    assert readers.read_meminfo(tmp_path) is None


def test_pressure_calm_and_thrashing(tmp_path: Path) -> None:
    hosts.write(tmp_path, "proc/pressure/memory", hosts.PSI_THRASHING)
    assert readers.read_pressure(tmp_path) == readers.Pressure(41.27, 18.03, 22.5, 9.8)
    hosts.write(tmp_path, "proc/pressure/memory", hosts.PSI_CALM)
    assert readers.read_pressure(tmp_path) == readers.Pressure(0.0, 0.0, 0.0, 0.0)


def test_pressure_absent_or_unparsable_is_none(tmp_path: Path) -> None:
    assert readers.read_pressure(tmp_path) is None  # kernel without CONFIG_PSI
    hosts.write(tmp_path, "proc/pressure/memory", "some avg10=lots\n")
    assert readers.read_pressure(tmp_path) is None


def test_cgroup_v2_service_group_with_limit(tmp_path: Path) -> None:
    group = readers.read_cgroup(hosts.orin_nano(tmp_path))
    assert group == readers.CgroupMemory(2, "/system.slice/tcccd.service", 1073741824, 6442450944,
                                         1073741824 - 201326592)


def test_cgroup_v2_without_limit(tmp_path: Path) -> None:
    hosts.orin_nano(tmp_path)
    hosts.write(tmp_path, "sys/fs/cgroup/system.slice/tcccd.service/memory.max", "max\n")
    group = readers.read_cgroup(tmp_path)
    assert group is not None and group.limit_bytes is None and group.current_bytes == 1073741824


def test_cgroup_v2_namespaced_path_falls_back_to_the_root(tmp_path: Path) -> None:
    """In a container /proc/self/cgroup names a path the container's /sys/fs/cgroup does not have."""
    hosts.write(tmp_path, "proc/self/cgroup", "0::/kubepods/pod1/abc\n")
    hosts.write(tmp_path, "sys/fs/cgroup/memory.current", "5000\n")
    hosts.write(tmp_path, "sys/fs/cgroup/memory.max", "100000\n")
    group = readers.read_cgroup(tmp_path)
    assert group is not None and (group.current_bytes, group.limit_bytes) == (5000, 100000)


def test_cgroup_v2_under_unified_on_a_hybrid_host(tmp_path: Path) -> None:
    hosts.write(tmp_path, "proc/self/cgroup", "0::/user.slice\n")
    hosts.write(tmp_path, "sys/fs/cgroup/unified/user.slice/memory.current", "7000\n")
    group = readers.read_cgroup(tmp_path)
    assert group is not None and group.version == 2 and group.current_bytes == 7000 and group.limit_bytes is None


def test_cgroup_v1_unlimited_and_limited(tmp_path: Path) -> None:
    group = readers.read_cgroup(hosts.cgroup_v1(tmp_path))
    assert group == readers.CgroupMemory(1, "/process_api/abc", 1704013824, None, 1704013824 - 104013824)
    group = readers.read_cgroup(hosts.cgroup_v1(tmp_path, limit="4294967296"))
    assert group is not None and group.limit_bytes == 4294967296


def test_no_cgroup_files_reads_as_none(tmp_path: Path) -> None:
    assert readers.read_cgroup(tmp_path) is None
    hosts.write(tmp_path, "proc/self/cgroup", "0::/\n")
    assert readers.read_cgroup(tmp_path) is None


def test_process_rss_pss_and_swap(tmp_path: Path) -> None:
    hosts.process(tmp_path, 4242, rss_kib=612000, pss_kib=540000, swap_kib=12)
    assert readers.read_process(tmp_path, 4242) == readers.ProcessMemory(4242, 612000 * KIB, 540000 * KIB, 12 * KIB)


def test_process_gone_reads_as_none(tmp_path: Path) -> None:
    assert readers.read_process(tmp_path, 999999) is None


def test_real_proc_reads_this_process() -> None:
    """On the machine itself (host root /): this test's own process is there and PSS <= RSS."""
    import os

    own = readers.read_process(Path("/"), os.getpid())
    assert own is not None and 0 < own.pss_bytes <= own.rss_bytes
    assert readers.read_meminfo(Path("/")) is not None
