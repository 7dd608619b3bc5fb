"""LZ4 block decompression (Parquet's LZ4_RAW codec) in a compiled loop, many pages per call.

Data files this system writes use ZSTD or no codec (see ``store._writer_options``), but
other writers' files (a database's data written otherwise, a user's Parquet) may use LZ4.
Through pyarrow each page costs a call that allocates its own buffer, ~5 us for a 4 KiB
page, most of it call overhead; here all of a fetch's pages decompress in one call into
one buffer. Every read and write is bounds-checked: a damaged page fails, never reads or
writes outside its buffers.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _block(src, ip, end, dst, op, limit):
    """Decompress the LZ4 block ``src[ip:end]`` into ``dst[op:limit]``; returns the end
    of the output, or -1 if the block is damaged or does not fill it exactly."""
    while ip < end:
        token = src[ip]
        ip += 1
        n = np.int64(token >> 4)
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
        for j in range(n):
            dst[op + j] = src[ip + j]
        ip += n
        op += n
        if ip == end:  # the last sequence has literals only
            break
        if end - ip < 2:
            return -1
        offset = np.int64(src[ip]) | (np.int64(src[ip + 1]) << 8)
        ip += 2
        m = np.int64(token & 15)
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
        for j in range(m):  # (byte by byte: the match may overlap what it writes)
            dst[op + j] = dst[op + j - offset]
        op += m
    return op if op == limit else -1


@njit(cache=True, nogil=True)
def decompress_blocks(src, lo, hi, sizes):
    """Blocks ``src[lo[i]:hi[i]]`` decompressed to ``sizes[i]`` bytes each, laid end to end;
    returns (that buffer, -1) or (_, index of the first damaged block)."""
    total = np.int64(0)
    for i in range(sizes.shape[0]):
        if sizes[i] < 0 or lo[i] < 0 or hi[i] > src.shape[0] or lo[i] > hi[i]:
            return np.zeros(0, dtype=np.uint8), i
        total += sizes[i]
    out = np.empty(total, dtype=np.uint8)
    op = np.int64(0)
    for i in range(sizes.shape[0]):
        if _block(src, lo[i], hi[i], out, op, op + sizes[i]) < 0:
            return out, i
        op += sizes[i]
    return out, -1
