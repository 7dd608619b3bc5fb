"""Freed large blocks go back to the system during index builds (glibc only).

glibc's malloc serves a block of at least ``M_MMAP_THRESHOLD`` bytes (128 KiB at first)
by its own ``mmap`` and unmaps it when freed. But each time such a block is freed it
raises the threshold to that block's size, up to 32 MiB: after a few chunks of a build,
the chunk's arrays (tokens, term ids, sort buffers: megabytes each) come from the heap,
and what they free stays there, spread over the build threads' arenas. A 1M-document
build of the benchmark corpus peaked at ~1,250 MB of RSS, of which ~400 MB
``malloc_trim`` could hand back once it ended.

Fixing the threshold (``mallopt``, which also stops it moving) keeps blocks of 1 MiB and
more out of the heap: that build peaks at ~880 MB, and takes ~13% longer (pages of a
fresh mapping are faulted in again; medians of four runs, 15.0 vs 17.0 s). It holds for
the rest of the process: the threshold it sets is within the range glibc's own dynamic
threshold moves in, and blocks below it are served as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

# mallopt's parameter number for the threshold (glibc's malloc.h) and the value set.
M_MMAP_THRESHOLD = -3
THRESHOLD_BYTES = 1 << 20


@functools.lru_cache(maxsize=1)
def return_large_blocks() -> bool:
    """Fix glibc's mmap threshold at :data:`THRESHOLD_BYTES`, once per process; False
    where the C library is not glibc (nothing is changed)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # (only glibc has it)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES))
