"""Inside a worker: give memory back when the capper asks, and report what the GPU allocator holds.

glibc keeps freed heap in its arenas; `malloc_trim(0)` returns what it can to
the kernel, which on a worker that just decoded a long recording is often
tens of MB. Plugins free their own caches first (`Plugin.release_memory`),
then Python's cycles are collected, the CUDA caching allocator emptied where
torch has it initialised, and the heap trimmed last, so that what the others
freed is returned too.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Any, Protocol

import psutil
import structlog

from tcccd.kit.heap import malloc_trim
from tcccd.kit.memory_tracker import cuda_torch


class Releasable(Protocol):
    def release_memory(self) -> None: ...


def gpu_allocator_bytes() -> int | None:
    """What torch's CUDA caching allocator has reserved in this process, None where it is not in use.

    On the Jetson this memory is nvmap memory, shared with the CPU, and not part of the process's RSS,
    so the capper adds it to the worker's use.
    """
    torch = cuda_torch()
    return int(torch.cuda.memory_reserved()) if torch is not None else None


def release(plugins: Iterable[tuple[str, Releasable]]) -> dict[str, Any]:
    """Ask every plugin to release, then collect, empty the CUDA cache and trim; returns what it achieved."""
    log = structlog.get_logger()
    process = psutil.Process()
    before = process.memory_info().rss
    errors: dict[str, str] = {}
    for name, plugin in plugins:
        try:
            plugin.release_memory()
        except Exception as exc:  # noqa: BLE001 - a plugin that fails to release keeps serving
            errors[name] = f"{type(exc).__name__}: {exc}"
            log.warning("plugin release_memory failed", stage=name, exc_info=True)
    gc.collect()
    torch = cuda_torch()
    if torch is not None:
        torch.cuda.empty_cache()
    trimmed = malloc_trim()
    after = process.memory_info().rss
    return {"rss_before_bytes": before, "rss_after_bytes": after, "freed_bytes": max(0, before - after),
            "malloc_trim": trimmed, "errors": errors}
