"""Sorted term dictionaries as byte buffers (index/sorted_terms.py): lookup by binary
search, union by merging, and sorting terms into their byte order.

A dictionary is (``data`` uint8 UTF-8 bytes, ``offsets`` int64[n+1]); its terms are
distinct and sorted by their bytes (Arrow's string order, which is also code point order).
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy


cdef inline int _compare(const uint8_t* a, int64_t a0, int64_t a1, const uint8_t* b, int64_t b0,
                         int64_t b1) noexcept nogil:
    """-1, 0 or 1 as bytes a[a0:a1] sort before, equal or after b[b0:b1]."""
    cdef int64_t la = a1 - a0, lb = b1 - b0
    cdef int c = memcmp(a + a0, b + b0, min(la, lb)) if la and lb else 0
    if c:
        return -1 if c < 0 else 1
    return 0 if la == lb else (-1 if la < lb else 1)


cdef inline const uint8_t* _bytes(const uint8_t[::1] data) noexcept:
    return &data[0] if data.shape[0] else NULL


def find_term(const uint8_t[::1] data, const int64_t[::1] offsets, bytes needle) -> int:
    """The index of the UTF-8 term ``needle`` in the sorted dictionary (``data``,
    ``offsets``), or -1."""
    cdef int64_t lo = 0, hi = offsets.shape[0] - 1, mid, found = -1
    cdef const uint8_t* d = _bytes(data)
    cdef const uint8_t* nd = <const uint8_t*>needle
    cdef int64_t nl = len(needle)
    cdef int c
    with nogil:
        while lo < hi:
            mid = (lo + hi) // 2
            c = _compare(d, offsets[mid], offsets[mid + 1], nd, 0, nl)
            if c == 0:
                found = mid
                break
            if c < 0:
                lo = mid + 1
            else:
                hi = mid
    return found


def merge_terms(const uint8_t[::1] a_data, const int64_t[::1] a_off, const uint8_t[::1] b_data,
                const int64_t[::1] b_off):
    """The sorted union of two sorted dictionaries, in one linear pass.

    Returns ``(data, offsets, map_a, map_b)``: the union's buffers and each input term's
    index in it."""
    cdef Py_ssize_t na = a_off.shape[0] - 1, nb = b_off.shape[0] - 1
    out_data_arr = np.empty(a_data.shape[0] + b_data.shape[0], dtype=np.uint8)
    out_off_arr = np.zeros(na + nb + 1, dtype=np.int64)
    map_a_arr = np.empty(na, dtype=np.int64)
    map_b_arr = np.empty(nb, dtype=np.int64)
    cdef uint8_t[::1] out_data_v = out_data_arr
    cdef int64_t[::1] out_off = out_off_arr, map_a = map_a_arr, map_b = map_b_arr
    cdef uint8_t* out_data = &out_data_v[0] if out_data_v.shape[0] else NULL
    cdef const uint8_t* a = _bytes(a_data)
    cdef const uint8_t* b = _bytes(b_data)
    cdef int64_t i = 0, j = 0, n = 0, end = 0, s, e
    cdef int c
    with nogil:
        while i < na or j < nb:
            if j == nb:
                c = -1
            elif i == na:
                c = 1
            else:
                c = _compare(a, a_off[i], a_off[i + 1], b, b_off[j], b_off[j + 1])
            if c <= 0:
                s, e = a_off[i], a_off[i + 1]
                if e > s:
                    memcpy(out_data + end, a + s, e - s)
                map_a[i] = n
                i += 1
                if c == 0:
                    map_b[j] = n
                    j += 1
            else:
                s, e = b_off[j], b_off[j + 1]
                if e > s:
                    memcpy(out_data + end, b + s, e - s)
                map_b[j] = n
                j += 1
            end += e - s
            n += 1
            out_off[n] = end
    return out_data_arr[:end].copy(), out_off_arr[: n + 1].copy(), map_a_arr, map_b_arr


cdef inline uint64_t _word(const uint8_t* data, int64_t start, int64_t end,
                           int64_t depth) noexcept nogil:
    """Bytes 8*depth .. 8*depth+7 of data[start:end], big-endian, zero-padded."""
    cdef int64_t at = start + depth * 8, k
    cdef uint64_t key = 0
    if end - at >= 8:
        for k in range(8):
            key = (key << 8) | data[at + k]
        return key
    for k in range(8):
        key = (key << 8) | (data[at + k] if at + k < end else 0)
    return key


cdef struct Keyed:
    uint64_t key
    int64_t item


cdef enum:
    _RUN = 32  # runs sorted by insertion before merging


cdef void _stable_sort(Keyed* p, Keyed* tmp, int64_t n) noexcept nogil:
    """Sort ``p[:n]`` by key, equal keys keeping their order (``tmp``: n scratch entries):
    insertion-sorted runs, then bottom-up merges."""
    cdef int64_t lo, hi, mid, i, j, k, width
    cdef Keyed x
    cdef Keyed* src = p
    cdef Keyed* dst = tmp
    lo = 0
    while lo < n:
        hi = min(lo + _RUN, n)
        for i in range(lo + 1, hi):
            x = p[i]
            j = i
            while j > lo and p[j - 1].key > x.key:
                p[j] = p[j - 1]
                j -= 1
            p[j] = x
        lo = hi
    width = _RUN
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if src[j].key < src[i].key:
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            if i < mid:
                memcpy(dst + k, src + i, (mid - i) * sizeof(Keyed))
            if j < hi:
                memcpy(dst + k, src + j, (hi - j) * sizeof(Keyed))
            lo = hi
        src, dst = dst, src
        width *= 2
    if src != p:
        memcpy(p, src, n * sizeof(Keyed))


def sort_terms(const uint8_t[::1] data, const int64_t[::1] offsets, const int64_t[::1] items):
    """``items`` (term indices into the byte buffers) in the byte order of their terms.

    An MSD radix over 8-byte words: a stable sort on one word, then each run of equal
    words sorted on the next one, and a run whose terms have no more bytes by length (a
    shorter term is a prefix of the longer ones, so it sorts first). Equal terms keep their
    order in ``items``."""
    cdef int64_t n = items.shape[0]
    out_arr = np.empty(n, dtype=np.int64)
    if n == 0:
        return out_arr
    cdef int64_t[::1] out = out_arr
    # the (key, item) pairs and their merge scratch; the stack of ranges left to refine
    # (disjoint ranges of two or more items, so at most n // 2 at once)
    cdef Keyed* pairs = <Keyed*>malloc(2 * n * sizeof(Keyed) + 3 * (n // 2 + 1) * sizeof(int64_t))
    if pairs == NULL:
        raise MemoryError()
    cdef Keyed* tmp = pairs + n
    cdef int64_t* stack = <int64_t*>(tmp + n)
    cdef const uint8_t* d = _bytes(data)
    cdef int64_t i, j, m, a, b, depth, item, top = 0
    cdef bint longer
    with nogil:
        for i in range(n):
            item = items[i]
            pairs[i].key = _word(d, offsets[item], offsets[item + 1], 0)
            pairs[i].item = item
        _stable_sort(pairs, tmp, n)
        stack[0], stack[1], stack[2] = 0, n, 0
        top = 1
        while top:
            # pairs[a:b] are sorted on, and keyed by, their words at ``depth``
            top -= 1
            a, b, depth = stack[3 * top], stack[3 * top + 1], stack[3 * top + 2]
            i = a
            while i < b:
                j = i + 1
                while j < b and pairs[j].key == pairs[i].key:
                    j += 1
                if j - i > 1:
                    longer = False
                    for m in range(i, j):
                        item = pairs[m].item
                        if offsets[item + 1] - offsets[item] > 8 * (depth + 1):
                            longer = True
                            break
                    for m in range(i, j):
                        item = pairs[m].item
                        if longer:
                            pairs[m].key = _word(d, offsets[item], offsets[item + 1], depth + 1)
                        else:
                            pairs[m].key = <uint64_t>(offsets[item + 1] - offsets[item])
                    _stable_sort(pairs + i, tmp, j - i)
                    if longer:
                        stack[3 * top], stack[3 * top + 1], stack[3 * top + 2] = i, j, depth + 1
                        top += 1
                i = j
        for i in range(n):
            out[i] = pairs[i].item
        free(pairs)
    return out_arr
