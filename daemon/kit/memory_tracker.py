"""Peak memory of one step (a model load, an engine build, a decode), for plugins, benches and the memory capper.

    with MemoryTracker("encoder load") as m:
        ...
    m.peak_rss_bytes, m.cuda_peak_bytes

RSS peak: the kernel's own high-water mark (VmHWM) catches spikes no sampler
sees, but it is process-lifetime and resetting it (clear_refs) would break an
enclosing tracker. So when VmHWM rose during the step, the new VmHWM is the
step's peak exactly; otherwise the step stayed under an older peak and a
sampling thread's maximum (plus the RSS at both ends) is the best figure there
is. Both are read through the kernel's approximate per-CPU counters, so a sample
can exceed the high-water mark by a few hundred KB: an enclosing tracker therefore
takes the peak of every tracker it encloses, and nested figures never disagree.
CUDA: torch's allocator peak, reset at entry, read only where torch is
already imported and CUDA initialised (a tracker never loads torch or a GPU
context; on the Jetson CUDA memory is also system RAM, NvMapMemUsed).
"""

from __future__ import annotations

import contextvars
import sys
import threading
from pathlib import Path
from types import TracebackType

KIB = 1024
_OPEN: contextvars.ContextVar[tuple[MemoryTracker, ...]] = contextvars.ContextVar("open_memory_trackers",
                                                                                  default=())


def _status_bytes(field: str, status_file: Path = Path("/proc/self/status")) -> int | None:
    """A `Vm...:  123 kB` line of /proc/self/status in bytes; None where there is no such file or line."""
    try:
        text = status_file.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * KIB
    return None


def current_rss_bytes() -> int:
    value = _status_bytes("VmRSS")
    if value is not None:
        return value
    import psutil  # not Linux: psutil knows the platform's call

    return int(psutil.Process().memory_info().rss)


def cuda_torch() -> object | None:
    """torch, if this process already imported it and has a CUDA context; never imports anything."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return None
    return torch


class MemoryTracker:
    """Context manager measuring peak RSS (and CUDA allocator peak) between enter and exit, in bytes."""

    def __init__(self, step: str, sample_interval_s: float = 0.005) -> None:
        self.step = step
        self.sample_interval_s = sample_interval_s
        self.start_rss_bytes = 0
        self.end_rss_bytes = 0
        self.peak_rss_bytes = 0
        self.cuda_peak_bytes: int | None = None  # None: no CUDA in this process
        self._start_hwm: int | None = None
        self._sampled_peak = 0
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None
        self._token: contextvars.Token[tuple[MemoryTracker, ...]] | None = None

    def __enter__(self) -> MemoryTracker:
        self._start_hwm = _status_bytes("VmHWM")
        self.start_rss_bytes = self._sampled_peak = current_rss_bytes()
        torch = cuda_torch()
        if torch is not None:
            torch.cuda.reset_peak_memory_stats()
        self._stop.clear()
        self._sampler = threading.Thread(target=self._sample, name=f"memory-{self.step}", daemon=True)
        self._sampler.start()
        self._token = _OPEN.set((*_OPEN.get(), self))
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._sampler is not None:
            self._sampler.join()
        self.end_rss_bytes = current_rss_bytes()
        end_hwm = _status_bytes("VmHWM")
        self.peak_rss_bytes = max(self._sampled_peak, self.end_rss_bytes)
        if end_hwm is not None and self._start_hwm is not None and end_hwm > self._start_hwm:
            self.peak_rss_bytes = max(self.peak_rss_bytes, end_hwm)  # the process peak was set in this step
        if self._token is not None:
            _OPEN.reset(self._token)
        for enclosing in _OPEN.get():
            enclosing._include(self.peak_rss_bytes)
        torch = cuda_torch()
        if torch is not None:
            self.cuda_peak_bytes = int(torch.cuda.max_memory_allocated())

    def _include(self, peak_bytes: int) -> None:
        """A tracker this one encloses saw this peak: it happened within this step too."""
        self._sampled_peak = max(self._sampled_peak, peak_bytes)

    def _sample(self) -> None:
        while not self._stop.wait(self.sample_interval_s):
            self._sampled_peak = max(self._sampled_peak, current_rss_bytes())

    @property
    def peak_delta_bytes(self) -> int:
        """How far above its starting RSS the step went (what the step itself cost at its worst)."""
        return self.peak_rss_bytes - self.start_rss_bytes

    def as_dict(self) -> dict[str, int | str | None]:
        """Figures in MiB for logs and bench tables."""
        mib = 1024 * 1024
        return {"step": self.step, "peak_rss_mb": round(self.peak_rss_bytes / mib),
                "peak_delta_mb": round(self.peak_delta_bytes / mib),
                "cuda_peak_mb": None if self.cuda_peak_bytes is None else round(self.cuda_peak_bytes / mib)}
