"""LZ4 block decompression (Parquet's LZ4_RAW codec) in a compiled loop, many pages per call.

The page reader decompresses LZ4 pages (this system's text pages by default, see
``store._writer_options``; other writers' files) through liblz4 where the system has it
(``storage/parquet/c_page_codecs.py``, about twice this loop's speed), else here.
Through pyarrow each page costs a call that allocates its own buffer, ~5 us for a 4 KiB
page, most of it call overhead; here all of a fetch's pages decompress in one call into
one buffer. Every read and write is bounds-checked: a damaged page fails, never reads or
writes outside its buffers.
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memcpy


cdef int64_t _block(const uint8_t* src, int64_t ip, int64_t end, uint8_t* dst, int64_t op,
                    int64_t limit) noexcept nogil:
    """Decompress the LZ4 block ``src[ip:end]`` into ``dst[op:limit]``; returns the end
    of the output, or -1 if the block is damaged or does not fill it exactly."""
    cdef int64_t token, n, m, b, offset, j
    while ip < end:
        token = src[ip]
        ip += 1
        n = token >> 4
        if n == 15:
            while True:
                if ip >= end:
                    return -1
                b = src[ip]
                ip += 1
                n += b
                if b != 255:
                    break
        if n > end - ip or n > limit - op:
            return -1
        memcpy(dst + op, src + ip, n)
        ip += n
        op += n
        if ip == end:  # the last sequence has literals only
            break
        if end - ip < 2:
            return -1
        offset = src[ip] | (<int64_t>src[ip + 1] << 8)
        ip += 2
        m = token & 15
        if m == 15:
            while True:
                if ip >= end:
                    return -1
                b = src[ip]
                ip += 1
                m += b
                if b != 255:
                    break
        m += 4
        if offset == 0 or offset > op or m > limit - op:
            return -1
        if offset >= m:  # (apart: one copy)
            memcpy(dst + op, dst + op - offset, m)
        else:  # (byte by byte: the match overlaps what it writes)
            for j in range(m):
                dst[op + j] = dst[op + j - offset]
        op += m
    return op if op == limit else -1


def decompress_blocks(const uint8_t[::1] src, const int64_t[::1] lo, const int64_t[::1] hi,
                      const int64_t[::1] sizes) -> tuple[np.ndarray, int]:
    """Blocks ``src[lo[i]:hi[i]]`` decompressed to ``sizes[i]`` bytes each, laid end to end;
    returns (that buffer, -1) or (_, index of the first damaged block)."""
    cdef int64_t n = sizes.shape[0], i, total = 0, op = 0, bad = -1
    if not lo.shape[0] == hi.shape[0] == n:
        raise ValueError("a start, end and size per block wanted")
    for i in range(n):
        if sizes[i] < 0 or lo[i] < 0 or hi[i] > src.shape[0] or lo[i] > hi[i]:
            return np.zeros(0, dtype=np.uint8), i
        total += sizes[i]
    out_array = np.empty(total, dtype=np.uint8)
    cdef uint8_t[::1] out = out_array
    with nogil:
        for i in range(n):
            if _block(&src[0], lo[i], hi[i], &out[0], op, op + sizes[i]) < 0:
                bad = i
                break
            op += sizes[i]
    return out_array, bad
