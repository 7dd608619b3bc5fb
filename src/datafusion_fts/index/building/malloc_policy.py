"""Freed large blocks go back to the system while an index is built, and stay in the heap
for what runs after (glibc only).

glibc's malloc serves a block of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at first)
by its own ``mmap`` and unmaps it when freed. But each time such a block is freed it
raises the threshold to that block's size, up to 32 MiB: after a few chunks of a build,
the chunk's arrays (tokens, term ids, sort buffers: megabytes each) come from the heap,
and what they free stays there, spread over the build threads' arenas. A 1M-document
build of the benchmark corpus peaked at ~1,250 MB of RSS, of which ~400 MB
``malloc_trim`` could hand back once it ended.

So while a build runs (:func:`large_blocks_returned`), the threshold is fixed at
:data:`BUILD_THRESHOLD` (``mallopt``, which also stops it moving): that build peaks at
~880 MB, and takes ~13% longer (pages of a fresh mapping are faulted in again; medians of
four runs, 15.0 vs 17.0 s).

Left fixed, it could cost later queries of the process as much: a fetch of 941 rows'
text (a few MiB of pages read and decompressed, freed, asked for again by the next query)
faulted ~2,300-4,000 fresh pages in and took 16-24 ms instead of 11-16 (a process that
built a small index, then fetched from another table). Once the last build ends, the
threshold is therefore set where glibc's own moving one ends up (:data:`AFTER_THRESHOLD`,
the heap trimmed only past twice that, as glibc pairs them), and what the build left in
the heap is handed back (``malloc_trim``).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import threading
from collections.abc import Iterator

# mallopt's parameter numbers (glibc's malloc.h) and the values set.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
BUILD_THRESHOLD = 1 << 20
AFTER_THRESHOLD = 32 << 20  # (glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems)

_lock = threading.Lock()
_builds = 0  # (builds running in this process)


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    """glibc, or None where the C library is another."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # (only glibc has it)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        return None
    return libc


@contextlib.contextmanager
def large_blocks_returned() -> Iterator[bool]:
    """Within it, blocks of :data:`BUILD_THRESHOLD` bytes and more are mapped apart and
    unmapped when freed; after the last of those running at once, glibc's largest
    threshold and the heap trimmed. Yields False where the C library is not glibc
    (nothing is changed)."""
    global _builds
    libc = _libc()
    if libc is None:
        yield False
        return
    with _lock:
        _builds += 1
        if _builds == 1:
            libc.mallopt(M_MMAP_THRESHOLD, BUILD_THRESHOLD)
    try:
        yield True
    finally:
        with _lock:
            _builds -= 1
            if not _builds:
                libc.mallopt(M_MMAP_THRESHOLD, AFTER_THRESHOLD)
                libc.mallopt(M_TRIM_THRESHOLD, 2 * AFTER_THRESHOLD)
                libc.malloc_trim(0)
