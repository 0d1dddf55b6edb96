"""How eval asks the C allocator (glibc malloc) to keep its memory bounded by a block of queries.

Eval frees every block's arrays before the next block, but glibc keeps freed memory for reuse: smaller arrays
sit in the heap between live objects, and after a large array is freed the allocator raises its threshold for
handing big requests to mmap (up to 32 MiB), so later arrays of that size come from a heap that is never given
back. Measured on the PT set copied 10x100 (benchmarks/bench_scale.py), that made peak memory grow with the
number of blocks, that is with the queries. Both functions do nothing where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
# Arrays from this size up get their own pages, returned to the system when freed: a block's score, ranking and
# flag arrays are tens of MiB, the per-query arrays of a block far smaller.
MMAP_THRESHOLD_BYTES = 4 << 20


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
    except OSError:
        return None


_LIBC = _libc()


def release_freed_memory() -> None:
    """Hand the pages malloc holds free back to the system (glibc ``malloc_trim``), between blocks."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Fix glibc's mmap threshold for this process (``mallopt(M_MMAP_THRESHOLD)``; it no longer rises after a
    large free). The eval command sets it once at start; a library caller decides for its own process. Returns
    whether it was set."""
    return bool(_LIBC is not None and _LIBC.mallopt(_M_MMAP_THRESHOLD, threshold))
