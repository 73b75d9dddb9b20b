"""Fake host trees: what an Orin Nano, a cgroup v1 / v2 / hybrid box and a bare container show under /.

Each writer takes the tree's root (a temporary directory standing for `/`).
The texts are copied from real files in the kernel's own format.
"""

from __future__ import annotations

from pathlib import Path

# /proc/meminfo of a Jetson Orin Nano 8 GB (JetPack 6) with a model loaded on the GPU.
ORIN_MEMINFO = """\
MemTotal:        7802144 kB
MemFree:          412332 kB
MemAvailable:    2731400 kB
Buffers:           32564 kB
Cached:          2421908 kB
SwapCached:            0 kB
Active:          1309884 kB
Inactive:        4570476 kB
SwapTotal:       3901056 kB
SwapFree:        3901056 kB
AnonPages:       3402560 kB
Shmem:             38124 kB
NvMapMemFree:      45320 kB
NvMapMemUsed:    1254400 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
"""

PSI_CALM = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
PSI_THRASHING = ("some avg10=41.27 avg60=18.03 avg300=4.10 total=98277211\n"
                 "full avg10=22.50 avg60=9.80 avg300=2.01 total=51234009\n")

SMAPS_ROLLUP = """\
55bcfa729000-7ffe3cc9c000 ---p 00000000 00:00 0                          [rollup]
Rss:              {rss} kB
Pss:              {pss} kB
Pss_Anon:         {pss} kB
Shared_Clean:       1548 kB
Private_Dirty:       112 kB
Swap:                {swap} kB
SwapPss:               0 kB
"""


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def orin_nano(root: Path, psi: str = PSI_CALM) -> Path:
    """meminfo with NvMapMemUsed, PSI, and the service's cgroup v2 group with MemoryMax=6G."""
    write(root, "proc/meminfo", ORIN_MEMINFO)
    write(root, "proc/pressure/memory", psi)
    write(root, "proc/self/cgroup", "0::/system.slice/tcccd.service\n")
    group = "sys/fs/cgroup/system.slice/tcccd.service"
    write(root, f"{group}/memory.current", "1073741824\n")
    write(root, f"{group}/memory.max", "6442450944\n")
    write(root, f"{group}/memory.stat", "anon 805306368\nfile 268435456\ninactive_file 201326592\n")
    return root


def cgroup_v1(root: Path, limit: str = "9223372036854771712") -> Path:
    """A cgroup v1 (hybrid) box like the development machines: memory controller on its own hierarchy."""
    write(root, "proc/self/cgroup", "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n")
    group = "sys/fs/cgroup/memory/process_api/abc"
    write(root, f"{group}/memory.usage_in_bytes", "1704013824\n")
    write(root, f"{group}/memory.limit_in_bytes", f"{limit}\n")
    write(root, f"{group}/memory.stat", "cache 500000000\ntotal_inactive_file 104013824\n")
    return root


def process(root: Path, pid: int, rss_kib: int, pss_kib: int, swap_kib: int = 0) -> Path:
    return write(root, f"proc/{pid}/smaps_rollup", SMAPS_ROLLUP.format(rss=rss_kib, pss=pss_kib, swap=swap_kib))
