"""Parquet pages checked (CRC-32) and decompressed (ZSTD) by compiled loops calling the C
libraries, many pages per call and without the GIL.

The data files this system writes hold ZSTD pages of a few KiB, each with a CRC. From
Python every page is a ``zlib.crc32`` call and a ``zstandard`` call returning its own
bytes object, joined afterwards, and the GIL is taken back after each: a fetch of many
pages could not use a second core. Here libz's ``crc32`` and libzstd's
``ZSTD_decompressDCtx`` are bound by name (as ``file_ranges`` binds ``pread``), so the
kernels stay in numba's on-disk cache, and a piece of a fetch checks and decompresses
all its pages in one call into one buffer.

Both are the system's shared libraries (``libz.so.1``, ``libzstd.so.1``: present wherever
CPython's zlib module or systemd is). Where one cannot be loaded, ``AVAILABLE`` is False
and the page reader checks and decompresses through ``zlib`` and ``zstandard``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

import numpy as np
from llvmlite import binding
from numba import njit, types


def _load(name: str, symbols: tuple[str, ...]) -> ctypes.CDLL | None:
    """The shared library ``name`` (as ``find_library`` spells it), loaded for numba's
    linker too, with ``symbols`` present; None if this system has none."""
    found = ctypes.util.find_library(name)
    if found is None:
        return None
    try:
        binding.load_library_permanently(found)
        lib = ctypes.CDLL(found)
        for symbol in symbols:
            getattr(lib, symbol)
    except (OSError, RuntimeError, AttributeError):
        return None
    return lib


_ZSTD = _load("zstd", ("ZSTD_createDCtx", "ZSTD_freeDCtx", "ZSTD_decompressDCtx"))
_Z = _load("z", ("crc32",))
AVAILABLE = _ZSTD is not None and _Z is not None
if _ZSTD is not None:
    _ZSTD.ZSTD_createDCtx.restype = ctypes.c_void_p
    _ZSTD.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]

# size_t ZSTD_decompressDCtx(ZSTD_DCtx*, void* dst, size_t, const void* src, size_t):
# the bytes written, or an error code (a size_t near 2**64).
_decompress_dctx = types.ExternalFunction(
    "ZSTD_decompressDCtx", types.uint64(types.uint64, types.voidptr, types.uint64, types.voidptr, types.uint64)
)
# uLong crc32(uLong crc, const Bytef* buf, uInt len)
_crc32 = types.ExternalFunction("crc32", types.uint64(types.uint64, types.voidptr, types.uint32))


@njit(cache=True, nogil=True)
def _check(src, has, lo, hi, crc):  # pragma: no cover - compiled
    """-1, or the first page ``i`` with ``has[i]`` whose bytes ``src[lo[i]:hi[i]]`` are
    out of bounds or do not have the CRC-32 ``crc[i]``."""
    for i in range(lo.shape[0]):
        if not has[i]:
            continue
        a, b = lo[i], hi[i]
        if a < 0 or b < a or b > src.shape[0] or b - a >= 1 << 32:
            return i
        if np.int64(_crc32(np.uint64(0), src[a:].ctypes.data, np.uint32(b - a))) != crc[i]:
            return i
    return -1


@njit(cache=True, nogil=True)
def _frames(dctx, src, lo, hi, sizes, out):  # pragma: no cover - compiled
    """Frame i (``src[lo[i]:hi[i]]``, ``sizes[i]`` bytes decompressed) into ``out`` after
    frames 0..i-1. Returns -1, or the first frame out of ``src``'s bounds, damaged, or
    of another size: nothing is read or written outside the buffers."""
    at = 0
    for i in range(lo.shape[0]):
        a, b, z = lo[i], hi[i], sizes[i]
        if a < 0 or b < a or b > src.shape[0] or z < 0 or at + z > out.shape[0]:
            return i
        got = _decompress_dctx(dctx, out[at:].ctypes.data, np.uint64(z), src[a:].ctypes.data, np.uint64(b - a))
        if got != np.uint64(z):
            return i
        at += z
    return -1


def check_crcs(src: np.ndarray, has: np.ndarray, lo: np.ndarray, hi: np.ndarray, crc: np.ndarray) -> int:
    """-1, or the first page (``has[i]``: it carries a CRC) whose ``src[lo[i]:hi[i]]``
    does not match ``crc[i]`` (unsigned). Needs ``AVAILABLE``."""
    return int(_check(src, has.astype(np.bool_), lo.astype(np.int64), hi.astype(np.int64), crc.astype(np.int64)))


class _Context:
    """A ZSTD decompression context, freed with the thread holding it (libzstd's
    contexts are not shared between threads)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        self.handle = int(lib.ZSTD_createDCtx() or 0)
        if not self.handle:
            raise MemoryError("libzstd could not make a decompression context")

    def __del__(self) -> None:
        if self.handle:
            self.lib.ZSTD_freeDCtx(self.handle)


_local = threading.local()


def decompress_frames(src: np.ndarray, lo: np.ndarray, hi: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, int]:
    """The ZSTD frames ``src[lo[i]:hi[i]]`` decompressed end to end (``sizes[i]`` bytes
    each), and -1 or the first frame that is not ZSTD of its size. Needs ``AVAILABLE``."""
    assert _ZSTD is not None
    context = getattr(_local, "context", None)
    if context is None:
        context = _local.context = _Context(_ZSTD)
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    bad = _frames(np.uint64(context.handle), src, lo.astype(np.int64), hi.astype(np.int64),
                  sizes.astype(np.int64), out)
    return out, int(bad)
