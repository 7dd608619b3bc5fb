"""BM25's loops over rows, blocks and postings (index/bm25.py holds the formula, its
statistics and the callers).

Each is one pass computing the same float64 operations in the same order as the formula
in index/bm25.py, so its values are bit-identical to every other plan's (no temporaries
of an array expression either: a query after a write recomputes every row's norm and
every block's bound).
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t
from libc.string cimport memcpy

from datafusion_fts.kernels.invert cimport IMPACT_MAX

# A row length array: a segment's uint32, a token stream's int32, a 16-bit impact point's.
ctypedef fused length:
    uint16_t
    int32_t
    uint32_t

# Impact points: 16 bits (saturated at IMPACT_MAX) or 32 bits (segments written before).
ctypedef fused impact:
    uint16_t
    uint32_t


def row_norms(const length[::1] dl, double k1, double b, double avgdl):
    """``k1 * ((1 - b) + (b * dl) / avgdl)`` for every row (float64)."""
    out_arr = np.empty(dl.shape[0], dtype=np.float64)
    cdef double[::1] out = out_arr
    cdef Py_ssize_t i
    with nogil:
        for i in range(dl.shape[0]):
            out[i] = k1 * ((1.0 - b) + (b * <double>dl[i]) / avgdl)
    return out_arr


def block_bounds(const impact[::1] impact_tf, const impact[::1] impact_dl, int64_t impacts, double k1, double b,
                 double avgdl, bint empty, double margin):
    """Per block of ``impacts`` points, the largest ``tf / (tf + norm) * margin`` over
    them (``norm`` is ``k1`` when ``empty``, the collection has no rows); a 16-bit tf of
    ``IMPACT_MAX`` gives ``margin`` (the limit 1 of the tf factor). A float 0/0 is NaN, as
    in numpy, and then the block's bound, as in numpy's max."""
    cdef Py_ssize_t n = impact_tf.shape[0] // impacts
    out_arr = np.empty(n, dtype=np.float64)
    cdef double[::1] out = out_arr
    cdef Py_ssize_t block, j, i
    cdef double best, factor
    with nogil:
        for block in range(n):
            i = block * impacts
            best = _point_bound(impact_tf[i], impact_dl[i], k1, b, avgdl, empty, margin)
            for j in range(i + 1, i + impacts):  # (each block its own short chain of choices)
                factor = _point_bound(impact_tf[j], impact_dl[j], k1, b, avgdl, empty, margin)
                best = _select((factor > best) | (factor != factor), factor, best)  # (a NaN stays)
            out[block] = best
    return out_arr


cdef inline double _point_bound(impact tf, impact dl, double k1, double b, double avgdl, bint empty,
                                double margin) noexcept nogil:
    """One impact point's ``tf / (tf + norm) * margin`` (``margin`` for a saturated 16-bit tf)."""
    if impact is uint16_t:
        if tf == IMPACT_MAX:
            return margin
    cdef double norm = k1 if empty else k1 * ((1.0 - b) + (b * <double>dl) / avgdl)
    return <double>tf / (<double>tf + norm) * margin


cdef inline double _select(bint take, double a, double b) noexcept nogil:
    """``a if take else b`` without a branch: which factor of a block is largest is data,
    so a branch mispredicts about every other point (6x slower)."""
    cdef int64_t x, y, mask = -<int64_t>take
    memcpy(&x, &a, sizeof(double))
    memcpy(&y, &b, sizeof(double))
    x = (x & mask) | (y & ~mask)
    memcpy(&a, &x, sizeof(double))
    return a


def term_scores(const uint32_t[::1] tfs, const double[::1] norm, double weight):
    """``(weight * tf) / (tf + norm)`` per posting, with ``weight = idf * (k1 + 1)``."""
    out_arr = np.empty(tfs.shape[0], dtype=np.float64)
    cdef double[::1] out = out_arr
    cdef Py_ssize_t i
    cdef double tf
    with nogil:
        for i in range(tfs.shape[0]):
            tf = <double>tfs[i]
            out[i] = (weight * tf) / (tf + norm[i])
    return out_arr
