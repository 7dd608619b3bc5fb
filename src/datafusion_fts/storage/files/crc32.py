"""zlib's CRC-32, summed by libdeflate where the system has it.

Every byte read is checked against a CRC-32: data pages (Parquet's own), index segment
regions and whole data files (docs/design.md: "Checksums"). libdeflate folds it with
carry-less multiplication where the CPU has it: 10.5 GB/s here against libz's 2.4
(8 MiB), and 0.8 us against 3.4 a 4 KiB page. The value is the same function's (CRC-32,
polynomial 0xEDB88320, as ``zlib.crc32``): files written either way read the other way.
Without libdeflate, ``zlib.crc32`` (and libz's ``crc32`` for the compiled loops).
"""

from __future__ import annotations

import ctypes
import zlib
from typing import Any

import numpy as np

from ...kernels.page_codecs import LIBDEFLATE_CRC, LIBZ_CRC, first_bad_crc
from .c_libraries import address, load

# Pieces from which a call of libdeflate pays: a ctypes call costs ~0.5 us.
DEFLATE_MIN_BYTES = 2048

_DEFLATE = load("deflate", ("libdeflate_crc32",), "libdeflate.so.0")
if _DEFLATE is not None:
    _DEFLATE.libdeflate_crc32.restype = ctypes.c_uint32
    _DEFLATE.libdeflate_crc32.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
_Z = load("z", ("crc32",), "libz.so.1") if _DEFLATE is None else None

# The CRC-32 function compiled loops call: (its address, its kind), or None where this
# system has neither library.
KERNEL_CRC32: tuple[int, int] | None = (
    (address(_DEFLATE.libdeflate_crc32), LIBDEFLATE_CRC) if _DEFLATE is not None
    else (address(_Z.crc32), LIBZ_CRC) if _Z is not None else None
)


def crc32(data: Any, value: int = 0) -> int:
    """``zlib.crc32(data, value)`` (``data``: bytes, a memoryview or a contiguous uint8
    array), through libdeflate for pieces of ``DEFLATE_MIN_BYTES`` and more (the call
    releases the GIL, as zlib's does)."""
    if _DEFLATE is None:
        return zlib.crc32(data, value)
    view = np.frombuffer(data, dtype=np.uint8)
    if view.size < DEFLATE_MIN_BYTES:
        return zlib.crc32(view, value)
    return int(_DEFLATE.libdeflate_crc32(value, view.__array_interface__["data"][0], view.size))


def first_bad_region(data: np.ndarray, crcs: np.ndarray, region: int, which: np.ndarray) -> int:
    """-1, or the first of regions ``which`` (``region`` bytes each, the last one short) of
    ``data`` whose crc32 is not ``crcs[r]``: all summed by one compiled loop without the GIL
    (a segment's ~1,600 regions: one call, not ~1,600 from Python)."""
    if not len(which):
        return -1
    lo = which.astype(np.int64) * region
    hi = np.minimum(lo + region, len(data))
    want = crcs[which].astype(np.int64)
    if KERNEL_CRC32 is None:
        bad = next((i for i in range(len(which)) if crc32(data[lo[i] : hi[i]]) != want[i]), -1)
    else:
        bad = first_bad_crc(*KERNEL_CRC32, data, np.ones(len(which), dtype=np.uint8), lo, hi, want)
    return int(which[bad]) if bad >= 0 else -1
