"""Inside a worker: give memory back when the capper asks, and report what the GPU allocator holds.

glibc keeps freed heap in its arenas; `malloc_trim(0)` returns what it can to
the kernel, which on a worker that just decoded a long recording is often
tens of MB. Plugins free their own caches first (`Plugin.release_memory`),
then Python's cycles are collected, the CUDA caching allocator emptied where
torch has it initialised, and the heap trimmed last, so that what the others
freed is returned too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Iterable
from typing import Any, Protocol

import psutil
import structlog

from tcccd.kit.memory_tracker import _cuda_torch


class Releasable(Protocol):
    def release_memory(self) -> None: ...


def malloc_trim() -> bool:
    """Return free heap to the kernel; False where the C library has no malloc_trim (musl, macOS)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError):
        return False


M_MMAP_THRESHOLD = -3  # glibc malloc.h
LARGE_BLOCK_BYTES = 1 << 20


def mmap_large_blocks(threshold_bytes: int = LARGE_BLOCK_BYTES) -> bool:
    """Serve every allocation of `threshold_bytes` or more from its own mapping, returned to the kernel on free.

    glibc raises its mmap threshold each time a mapped block is freed (up to 32 MB), after which blocks of
    several MB come from the heap, and a freed heap block in the middle stays resident. An ONNX Runtime
    encoder without its arena allocates and frees its activations on every call: the ASR worker's heap kept
    ~170 MB after one 30 s window, and with this (1 MiB) ~20 MB. Process-wide; a fixed threshold also turns
    off glibc's adjustment. False where the C library has no mallopt.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, int(threshold_bytes)))
    except (OSError, AttributeError):
        return False


def gpu_allocator_bytes() -> int | None:
    """What torch's CUDA caching allocator has reserved in this process, None where it is not in use.

    On the Jetson this memory is nvmap memory, shared with the CPU, and not part of the process's RSS,
    so the capper adds it to the worker's use.
    """
    torch = _cuda_torch()
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
    torch = _cuda_torch()
    if torch is not None:
        torch.cuda.empty_cache()
    trimmed = malloc_trim()
    after = process.memory_info().rss
    return {"rss_before_bytes": before, "rss_after_bytes": after, "freed_bytes": max(0, before - after),
            "malloc_trim": trimmed, "errors": errors}
