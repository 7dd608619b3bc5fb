"""Fuzzy expansion's distance: Levenshtein distance in code points from a query term to
every term of a vocabulary, cut off at the fuzziness (index/expansion.py)."""

import numpy as np

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

from datafusion_fts.kernels.tokenizer cimport decode


cdef inline int64_t _code_points(const uint8_t* data, int64_t start, int64_t end,
                                 int64_t* out) noexcept nogil:
    """Decode ``data[start:end]`` into ``out`` as the tokenizer reads UTF-8; returns the count."""
    cdef int64_t n = 0, i = start
    cdef uint8_t b0
    while i < end:
        b0 = data[i]
        if b0 < 0x80:
            out[n] = b0
            i += 1
        else:
            out[n] = decode(data, i, end, &i)
        n += 1
    return n


def levenshtein_within(const uint8_t[::1] data, const int64_t[::1] offsets,
                       const int64_t[::1] query, int64_t max_dist):
    """Levenshtein distance (code points) from ``query`` to each UTF-8 string, or -1 where
    it exceeds ``max_dist`` (rows of the DP stop early once every cell is over)."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, m = query.shape[0]
    cdef int64_t s, i, j, cost, v, best, n_cand, longest = 0
    cdef bint over
    with nogil:
        for s in range(n):
            longest = max(longest, offsets[s + 1] - offsets[s])
    out_arr = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    # two rows of the DP and a candidate's code points
    cdef int64_t* prev = <int64_t*>malloc((2 * (m + 1) + longest) * sizeof(int64_t))
    if prev == NULL:
        raise MemoryError()
    cdef int64_t* work = prev
    cdef int64_t* cur = prev + m + 1
    cdef int64_t* cand = cur + m + 1
    cdef int64_t* swap
    cdef const uint8_t* d = &data[0] if data.shape[0] else NULL
    cdef const int64_t* q = &query[0] if m else NULL
    with nogil:
        for s in range(n):
            out[s] = -1
            n_cand = _code_points(d, offsets[s], offsets[s + 1], cand)
            if n_cand - m > max_dist or m - n_cand > max_dist:
                continue
            for j in range(m + 1):
                prev[j] = j
            over = False
            for i in range(1, n_cand + 1):
                cur[0] = i
                best = cur[0]
                for j in range(1, m + 1):
                    cost = 0 if cand[i - 1] == q[j - 1] else 1
                    v = prev[j - 1] + cost
                    if prev[j] + 1 < v:
                        v = prev[j] + 1
                    if cur[j - 1] + 1 < v:
                        v = cur[j - 1] + 1
                    cur[j] = v
                    if v < best:
                        best = v
                if best > max_dist:
                    over = True
                    break
                swap = prev
                prev = cur
                cur = swap
            if not over and prev[m] <= max_dist:
                out[s] = prev[m]
        free(work)
    return out_arr
