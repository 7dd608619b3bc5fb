"""Parquet pages checked (CRC-32) and decompressed (ZSTD, LZ4) by compiled loops calling
the C libraries, many pages per call and without the GIL.

The data files this system writes hold LZ4 or ZSTD pages of a few KiB, each with a CRC.
From Python every page is a ``zlib.crc32`` call and a decompressor's call returning its own
bytes object, joined afterwards, and the GIL is taken back after each: a fetch of many
pages could not use a second core. Here a piece of a fetch checks and decompresses all
its pages in one call into one buffer, calling libdeflate's ``libdeflate_crc32`` (or libz's
``crc32``), libzstd's
``ZSTD_decompressDCtx`` and liblz4's ``LZ4_decompress_safe`` through the addresses the
caller found at run time (``storage/parquet/c_page_codecs.py`` loads the libraries with
ctypes): the package is built without their headers, and runs where they are missing
(its callers then fall back to ``zlib``, ``zstandard`` and ``kernels/lz4_block.pyx``).
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.string cimport memcpy

from .parquet_thrift cimport (S_CRC, S_CRC_HI, S_CRC_LO, S_FIELDS, S_HAS_CRC, S_LEV_HI, S_LEV_LO, S_PACKED,
                              S_USIZE, S_VAL_HI, S_VAL_LO)

# uLong crc32(uLong crc, const Bytef* buf, uInt len): libz's
ctypedef unsigned long (*Crc32)(unsigned long, const uint8_t*, unsigned int) noexcept nogil
# uint32_t libdeflate_crc32(uint32_t crc, const void* buf, size_t len): the same CRC-32,
# folded with carry-less multiplication where the CPU has it (~4x libz's speed)
ctypedef uint32_t (*DeflateCrc32)(uint32_t, const void*, size_t) noexcept nogil
# ``crc_kind``: which of the two a CRC function's address is
LIBZ_CRC = 0
LIBDEFLATE_CRC = 1
# size_t ZSTD_decompressDCtx(ZSTD_DCtx*, void* dst, size_t, const void* src, size_t): the
# bytes written, or an error code (a size_t near 2**64).
ctypedef size_t (*DecompressDCtx)(void*, void*, size_t, const void*, size_t) noexcept nogil
# int LZ4_decompress_safe(const char* src, char* dst, int compressedSize, int dstCapacity):
# the bytes written, or a negative number for a damaged block.
ctypedef int (*Lz4DecompressSafe)(const char*, char*, int, int) noexcept nogil


cdef bint _is_deflate(int crc_kind) except -1:
    """Whether a CRC function of ``crc_kind`` is libdeflate's (else libz's)."""
    if crc_kind != LIBZ_CRC and crc_kind != LIBDEFLATE_CRC:
        raise ValueError(f"a CRC function of kind 0 or 1 wanted, not {crc_kind}")
    return crc_kind == LIBDEFLATE_CRC


cdef inline bint _crc_ok(size_t checksum, bint deflate, const uint8_t* src, int64_t n, int64_t a, int64_t b,
                         int64_t crc) noexcept nogil:
    """Whether ``src[a:b]`` lies within ``src[:n]`` and has the CRC-32 ``crc`` (unsigned),
    summed by the function at ``checksum`` (libdeflate's if ``deflate``, else libz's)."""
    if a < 0 or b < a or b > n or b - a >= 1LL << 32:
        return False
    if deflate:
        return <int64_t>(<DeflateCrc32><void*>checksum)(0, src + a, <size_t>(b - a)) == crc
    return <int64_t>(<Crc32><void*>checksum)(0, src + a, <unsigned int>(b - a)) == crc


def first_bad_crc(size_t crc32, int crc_kind, const uint8_t[::1] src, const uint8_t[::1] has, const int64_t[::1] lo,
                  const int64_t[::1] hi, const int64_t[::1] crc) -> int:
    """-1, or the first page ``i`` with ``has[i]`` (a bool array) whose bytes
    ``src[lo[i]:hi[i]]`` are out of bounds or do not have the CRC-32 ``crc[i]``
    (unsigned); ``crc32``: the address of libdeflate's ``libdeflate_crc32`` (``crc_kind``
    1) or libz's ``crc32`` (0)."""
    cdef bint deflate = _is_deflate(crc_kind)
    cdef int64_t n = lo.shape[0], i, bad = -1
    if not has.shape[0] == hi.shape[0] == crc.shape[0] == n:
        raise ValueError("a flag, end and CRC per page wanted")
    with nogil:
        for i in range(n):
            if not has[i]:
                continue
            if not _crc_ok(crc32, deflate, &src[0], src.shape[0], lo[i], hi[i], crc[i]):
                bad = i
                break
    return bad


# The codecs ``bad_frame`` decompresses.
ZSTD = 0
LZ4 = 1


cdef inline bint _frame_whole(bint is_lz4, size_t decompress, void* context, const uint8_t* src, int64_t n,
                             int64_t a, int64_t b, uint8_t* dst, int64_t room, int64_t z) noexcept nogil:
    """Whether the frame ``src[a:b]`` lies within ``src[:n]`` and decompresses to exactly
    ``z`` bytes into ``dst[:z]`` (``room`` bytes there): through libzstd's
    ``ZSTD_decompressDCtx`` at ``decompress`` with ``context``, or liblz4's
    ``LZ4_decompress_safe`` there (whose spans must fit an int)."""
    if a < 0 or b < a or b > n or z < 0 or z > room or (is_lz4 and (b - a >= 1LL << 31 or z >= 1LL << 31)):
        return False
    if is_lz4:
        return (<Lz4DecompressSafe><void*>decompress)(<const char*>src + a, <char*>dst, <int>(b - a), <int>z) == z
    return <int64_t>(<DecompressDCtx><void*>decompress)(context, dst, <size_t>z, src + a, <size_t>(b - a)) == z


def bad_frame(int codec, size_t decompress, size_t dctx, const uint8_t[::1] src, const int64_t[::1] lo,
              const int64_t[::1] hi, const int64_t[::1] sizes, uint8_t[::1] out) -> int:
    """Frame i (``src[lo[i]:hi[i]]``, ``sizes[i]`` bytes decompressed) into ``out`` after
    frames 0..i-1, through the function at address ``decompress``: for ``codec`` ZSTD
    libzstd's ``ZSTD_decompressDCtx`` with the context ``dctx`` (this thread's); for LZ4
    (Parquet's LZ4_RAW blocks) liblz4's ``LZ4_decompress_safe``, which never reads or
    writes outside the spans it is given. Returns -1, or the first frame out of
    ``src``'s bounds, damaged, or of another size: nothing is read or written outside
    the buffers."""
    cdef void* context = <void*>dctx
    cdef int64_t n = lo.shape[0], i, z, at = 0, bad = -1
    if not hi.shape[0] == sizes.shape[0] == n:
        raise ValueError("an end and a size per frame wanted")
    if codec != ZSTD and codec != LZ4:
        raise ValueError(f"codec {codec}: ZSTD ({ZSTD}) or LZ4 ({LZ4}) wanted")
    cdef bint is_lz4 = codec == LZ4
    with nogil:
        for i in range(n):
            z = sizes[i]
            if not _frame_whole(is_lz4, decompress, context, &src[0], src.shape[0], lo[i], hi[i], &out[0] + at,
                                out.shape[0] - at, z):
                bad = i
                break
            at += z
    return bad


def checked_and_inflated(int codec, size_t crc32, int crc_kind, size_t decompress, size_t dctx, const uint8_t[::1] raw,
                         int64_t[:, ::1] spans):
    """A small piece of a fetch in one call: every page's CRC checked (those that carry
    one: ``spans``' S_HAS_CRC, S_CRC, S_CRC_LO, S_CRC_HI, as ``first_bad_crc``), then the
    values of each compressed page (S_PACKED) decompressed (as ``bad_frame``) after the
    raw pages, where its S_VAL_LO/S_VAL_HI then point. Where every page is compressed,
    only the data pages v2's levels (S_LEV_LO/S_LEV_HI, moved too) are kept before the
    values, not the whole of ``raw``. Returns ``(buf, bad, why)``: those bytes followed
    by the decompressed values, and -1, or the first bad page with ``why`` 0 (a CRC
    mismatch: all CRCs are checked before anything is decompressed) or 1 (out of bounds,
    damaged, or of another size). What the page reader's separate loops do, without the
    arrays and calls between them (a fetch of ten rows' pages spent more on those than
    on the pages)."""
    cdef void* context = <void*>dctx
    cdef int64_t n = spans.shape[0], m = raw.shape[0], i, z, a, b, at, kept = 0, total, bad = -1
    cdef int why = 0
    cdef bint is_lz4 = codec == LZ4, levels_only = n > 0
    if spans.shape[1] != S_FIELDS:
        raise ValueError(f"a span table of {S_FIELDS} columns wanted")
    cdef bint deflate = _is_deflate(crc_kind)
    if codec != ZSTD and codec != LZ4:
        raise ValueError(f"codec {codec}: ZSTD ({ZSTD}) or LZ4 ({LZ4}) wanted")
    for i in range(n):  # (a level span out of bounds: everything kept, the values' loop reports it)
        a, b = spans[i, S_LEV_LO], spans[i, S_LEV_HI]
        if not spans[i, S_PACKED] or (a >= 0 and (b < a or b > m)):
            levels_only = False
            break
        if a >= 0:
            kept += b - a
    if not levels_only:
        kept = m
    total = kept
    for i in range(n):  # (a size out of range is left out: that page fails below, after every CRC)
        z = spans[i, S_USIZE]
        if spans[i, S_PACKED] and 0 <= z < 1LL << 40:
            total += z
    buf = np.empty(total, dtype=np.uint8)
    cdef uint8_t[::1] out = buf
    with nogil:
        if levels_only:
            at = 0
            for i in range(n):
                a, b = spans[i, S_LEV_LO], spans[i, S_LEV_HI]
                if a < 0:
                    continue
                if b > a:
                    memcpy(&out[0] + at, &raw[0] + a, b - a)
                spans[i, S_LEV_LO] = at
                spans[i, S_LEV_HI] = at + b - a
                at += b - a
        elif m:
            memcpy(&out[0], &raw[0], m)
        for i in range(n):
            if spans[i, S_HAS_CRC] and not _crc_ok(crc32, deflate, &raw[0], m, spans[i, S_CRC_LO], spans[i, S_CRC_HI],
                                                   spans[i, S_CRC]):
                bad = i
                break
        at = kept
        for i in range(n if bad < 0 else 0):
            if not spans[i, S_PACKED]:
                continue
            z = spans[i, S_USIZE]
            if not _frame_whole(is_lz4, decompress, context, &raw[0], m, spans[i, S_VAL_LO], spans[i, S_VAL_HI],
                                &out[0] + at, total - at, z):
                bad, why = i, 1
                break
            spans[i, S_VAL_LO] = at
            spans[i, S_VAL_HI] = at + z
            at += z
    return buf, bad, why
