"""During builds freed large blocks leave the heap (index/malloc_policy.py): after the
policy, a block of a few MiB freed and asked for again is a fresh mapping, where glibc's
moving threshold would have served it from the heap and kept it there once freed."""

from __future__ import annotations

import ctypes
import platform

import numpy as np
import pytest

from datafusion_fts.index.malloc_policy import THRESHOLD_BYTES, return_large_blocks


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _mapped_bytes() -> int:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _Mallinfo2
    return libc.mallinfo2().hblkhd


@pytest.mark.skipif(platform.system() != "Linux" or not platform.libc_ver()[0] == "glibc", reason="glibc's malloc")
def test_a_large_block_freed_and_asked_again_is_mapped() -> None:
    assert return_large_blocks()
    size = 4 * THRESHOLD_BYTES
    first = np.ones(size, dtype=np.uint8)
    del first  # (glibc alone would now raise its threshold past ``size``)
    before = _mapped_bytes()
    again = np.ones(size, dtype=np.uint8)
    assert _mapped_bytes() - before >= size
    del again
