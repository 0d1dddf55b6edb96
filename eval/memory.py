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
# A sparse model's blocks are capped (eval.evaluate.SPARSE_BLOCK_CELLS, 2^22 cells: arrays of at most 32 MiB), so
# under this threshold its block arrays come from the heap and are reused block after block, with no trim between
# blocks (``release_freed_memory``): pages handed back and faulted in anew each block cost system time (at 10x10,
# 4.6-6.5 s against 2.4-2.8 s, for a peak RSS of 273-279 against 284-285 MB; docs/eval.md, with the load).
CAPPED_BLOCKS_MMAP_THRESHOLD_BYTES = 64 << 20


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
    except OSError:
        return None


_LIBC = _libc()


_THRESHOLD = [None]  # the threshold fix_mmap_threshold set in this process, if any


def release_freed_memory() -> None:
    """Hand the pages malloc holds free back to the system (glibc ``malloc_trim``), between blocks; not where the
    threshold was raised for capped blocks, whose heap pages the next block reuses."""
    if _LIBC is not None and _THRESHOLD[0] != CAPPED_BLOCKS_MMAP_THRESHOLD_BYTES:
        _LIBC.malloc_trim(0)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Fix glibc's mmap threshold for this process (``mallopt(M_MMAP_THRESHOLD)``; it no longer rises after a
    large free). The eval command sets it for each model (``mmap_threshold``); a library caller decides for its own
    process. Returns whether it was set."""
    done = bool(_LIBC is not None and _LIBC.mallopt(_M_MMAP_THRESHOLD, threshold))
    _THRESHOLD[0] = threshold if done else None
    return done


def mmap_threshold(capped_blocks: bool) -> int:
    """The threshold for a model whose blocks are capped in cells (a sparse model) or cut by the budget alone."""
    return CAPPED_BLOCKS_MMAP_THRESHOLD_BYTES if capped_blocks else MMAP_THRESHOLD_BYTES
