"""Large output buffers on transparent huge pages, where the kernel offers them.

The first write to fresh anonymous memory faults once per 4 KiB page. On a virtual
machine whose memory the host backs lazily each fault can cost tens of microseconds:
on this project's test machine (a Firecracker guest, THP in ``madvise`` mode) filling
64 MiB of fresh ``np.empty`` took 0.3-1.1 s, and the same bytes in a mapping advised
``MADV_HUGEPAGE`` 0.06-0.09 s. A search that returns every matching row writes its whole
answer into fresh memory once: that output is allocated here. Where huge pages are
unavailable (another OS, THP off) the advice is ignored and this is a plain mapping.
"""

from __future__ import annotations

import mmap

import numpy as np

HUGE_PAGE = 2 << 20  # (x86-64 and arm64 with 4 KiB base pages)


def empty_bytes(n: int) -> np.ndarray:
    """An uninitialized uint8 array of ``n`` bytes; from ``HUGE_PAGE`` bytes up, mapped
    on its own, aligned to a huge page and advised to use them (freed with the array)."""
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if n < HUGE_PAGE or advice is None:
        return np.empty(n, dtype=np.uint8)
    region = mmap.mmap(-1, n + HUGE_PAGE)
    region.madvise(advice)
    whole = np.frombuffer(region, dtype=np.uint8)
    start = -whole.ctypes.data % HUGE_PAGE  # (untouched head and tail pages cost nothing)
    return whole[start : start + n]
