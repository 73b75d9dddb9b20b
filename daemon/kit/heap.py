"""The C heap of a worker process: giving freed memory back to the kernel.

glibc keeps freed blocks in its arenas, so a worker that decoded one long
recording keeps that memory resident long after. A plugin that allocates large
buffers per request asks for large blocks to be served from their own mappings
(`mmap_large_blocks`, once at set-up); the memory capper's release trims the
heap (`malloc_trim`). Both are no-ops that return False where the C library
has no such call (musl, macOS).
"""

from __future__ import annotations

import ctypes
import ctypes.util


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
