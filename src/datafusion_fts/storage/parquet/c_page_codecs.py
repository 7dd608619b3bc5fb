"""Parquet pages checked (CRC-32) and decompressed (ZSTD, LZ4) by compiled loops calling
the C libraries, many pages per call and without the GIL (``kernels/page_codecs.pyx``).

libzstd's ``ZSTD_decompressDCtx`` and liblz4's ``LZ4_decompress_safe`` are found at run
time, here, and the CRC-32 function by ``storage/files/crc32.py`` (libdeflate's, else
libz's); the kernels call them by address. They are the system's shared libraries
(``libzstd.so.1``, ``liblz4.so.1``, ``libdeflate.so.0`` or ``libz.so.1``: present wherever
systemd or CPython's zlib module is). Where libzstd or both CRC libraries cannot be
loaded, ``AVAILABLE`` is False and the page reader checks and decompresses through
``zlib`` and ``zstandard``; without liblz4 (``LZ4_AVAILABLE``), LZ4 pages go through the
package's own decoder (``kernels/lz4_block.pyx``, about half liblz4's speed).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

import numpy as np

from ...kernels.page_codecs import LZ4, ZSTD, bad_frame, checked_and_inflated, first_bad_crc
from ..files.c_libraries import address, load
from ..files.crc32 import KERNEL_CRC32
from .side_by_side import first_bad

# Bytes of pages worth a part on a second core (~100-250 us of work: a hand-off costs ~30).
CRC_PART_BYTES = 512 << 10
ZSTD_PART_BYTES = 256 << 10
LZ4_PART_BYTES = 512 << 10  # (liblz4 decompresses ~3 GB/s: ~170 us)
# Raw bytes of a piece of a fetch up to which its CRCs and decompression run in one call
# (``check_and_inflate``): far too little work to cut in parts.
FUSED_BYTES = 128 << 10


_ZSTD = load("zstd", ("ZSTD_createDCtx", "ZSTD_freeDCtx", "ZSTD_decompressDCtx"), "libzstd.so.1")
_LZ4 = load("lz4", ("LZ4_decompress_safe",), "liblz4.so.1")
AVAILABLE = _ZSTD is not None and KERNEL_CRC32 is not None
LZ4_AVAILABLE = _LZ4 is not None
if _ZSTD is not None:
    _ZSTD.ZSTD_createDCtx.restype = ctypes.c_void_p
    _ZSTD.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
# Where the functions the kernels call are.
_DECOMPRESS_DCTX = address(_ZSTD.ZSTD_decompressDCtx) if _ZSTD is not None else 0
_CRC32 = KERNEL_CRC32 or (0, 0)  # (address, kind)
_LZ4_DECOMPRESS = address(_LZ4.LZ4_decompress_safe) if _LZ4 is not None else 0


def check_crcs(src: np.ndarray, has: np.ndarray, lo: np.ndarray, hi: np.ndarray, crc: np.ndarray) -> int:
    """-1, or the first page (``has[i]``: it carries a CRC) whose ``src[lo[i]:hi[i]]``
    does not match ``crc[i]`` (unsigned). Needs ``AVAILABLE``."""
    has, lo, hi, crc = has.astype(np.bool_), lo.astype(np.int64), hi.astype(np.int64), crc.astype(np.int64)

    return first_bad(hi - lo, CRC_PART_BYTES,
                     lambda a, b: first_bad_crc(*_CRC32, src, has[a:b], lo[a:b], hi[a:b], crc[a:b]))


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


def decompress_frames(src: np.ndarray, lo: np.ndarray, hi: np.ndarray, sizes: np.ndarray,
                      out: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The ZSTD frames ``src[lo[i]:hi[i]]`` decompressed end to end (``sizes[i]`` bytes
    each; into ``out`` if given, of their total size), and -1 or the first frame that is
    not ZSTD of its size. Needs ``AVAILABLE``."""
    assert _ZSTD is not None

    def run(lo: np.ndarray, hi: np.ndarray, sizes: np.ndarray, out: np.ndarray) -> int:
        return bad_frame(ZSTD, _DECOMPRESS_DCTX, _zstd_context(), src, lo, hi, sizes, out)

    return _side_by_side(run, lo, hi, sizes, out, ZSTD_PART_BYTES)


def decompress_lz4_blocks(src: np.ndarray, lo: np.ndarray, hi: np.ndarray, sizes: np.ndarray,
                          out: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """:func:`decompress_frames` of LZ4 blocks (Parquet's LZ4_RAW). Needs ``LZ4_AVAILABLE``."""
    assert _LZ4 is not None
    return _side_by_side(lambda lo, hi, sizes, out: bad_frame(LZ4, _LZ4_DECOMPRESS, 0, src, lo, hi, sizes, out),
                         lo, hi, sizes, out, LZ4_PART_BYTES)


def _side_by_side(run: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], int], lo: np.ndarray,
                  hi: np.ndarray, sizes: np.ndarray, out: np.ndarray | None, least: int) -> tuple[np.ndarray, int]:
    """``run(lo, hi, sizes, out)`` (a kernel decompressing spans end to end into ``out``,
    returning -1 or its first bad span) over parts of the spans of about ``least``
    decompressed bytes each, side by side, each into its own stretch of the result."""
    lo, hi, sizes = lo.astype(np.int64), hi.astype(np.int64), sizes.astype(np.int64)
    if out is None:
        out = np.empty(int(sizes.sum()), dtype=np.uint8)
    elif len(out) != int(sizes.sum()):
        raise ValueError(f"{len(out)} bytes of room for {int(sizes.sum())} decompressed")
    starts = np.cumsum(sizes) - sizes

    def part(a: int, b: int) -> int:
        at = int(starts[a]) if a < len(starts) else 0
        return run(lo[a:b], hi[a:b], sizes[a:b], out[at : at + int(sizes[a:b].sum())])

    return out, first_bad(sizes, least, part)


def check_and_inflate(codec: str, raw: np.ndarray, spans: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """A small piece of a fetch (``raw``: its pages, at most ``FUSED_BYTES``; ``spans``:
    their span table, the values' spans moved where they are decompressed) checked and
    decompressed in one compiled call (``kernels/page_codecs.checked_and_inflated``):
    ``(buf, bad, why)``, why 0 a CRC mismatch, 1 a page that does not decompress to its
    size. None where it does not apply: a larger piece (its loops are cut in parts), a
    codec (``codec``, Parquet's name of the piece's one codec) other than ZSTD, LZ4 and
    none, or a library missing."""
    if len(raw) > FUSED_BYTES or not AVAILABLE:
        return None
    if codec == "LZ4":
        if _LZ4 is None:
            return None
        return checked_and_inflated(LZ4, *_CRC32, _LZ4_DECOMPRESS, 0, raw, spans)
    if codec in ("ZSTD", "UNCOMPRESSED"):  # (no page of a column without a codec is compressed)
        return checked_and_inflated(ZSTD, *_CRC32, _DECOMPRESS_DCTX, _zstd_context(), raw, spans)
    return None


def _zstd_context() -> int:
    """This thread's ZSTD decompression context (made on first use)."""
    context = getattr(_local, "context", None)
    if context is None:
        context = _local.context = _Context(_ZSTD)
    return context.handle
