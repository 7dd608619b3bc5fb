"""Inversion of a token stream into postings, and per-block metadata (index/building/builder.py,
index/transient.py).

Both are sequential walks (a counting sort by term, then run-length encoding of each
term's row ids), which numpy can only express through full sorts of the token stream.
The block constants (``BLOCK_SIZE``, ``BLOCK_IMPACTS``, ``IMPACT_MAX``) are declared in
``invert.pxd``.
"""

import numpy as np

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t

from datafusion_fts.kernels.arrays cimport fitted

from datafusion_fts.defaults import B, K1

# The BM25 parameters at which block_metadata judges which points to merge. Only the
# bounds' tightness depends on them: a point dominating a posting (tf at least, dl at
# most) bounds its score for every k1 >= 0, 0 <= b <= 1 and average length.
cdef double _REF_K1 = K1
cdef double _REF_B = B

cdef enum:
    # Blocks whose largest tf is below this find their frontier by bucketing tfs (no sort).
    _TF_BUCKETS = 64

# A stream's row ids: local uint32 ids (a segment's) or int32 (a batch's).
ctypedef fused row_id:
    int32_t
    uint32_t


def invert(const row_id[::1] local_rows, const int32_t[::1] term, const int32_t[::1] pos, int64_t n_terms,
           bint with_positions):
    """Postings of tokens given in (row, position) order.

    Returns ``(post_offsets int64[V+1], rows uint32[P], tfs uint32[P], pos_offsets
    int64[P+1], positions uint32[T])``; the position arrays are empty without positions.
    Within a term, postings are in ascending row order and positions ascending.
    """
    cdef Py_ssize_t n_tok = term.shape[0]
    tok_offsets_arr = np.zeros(n_terms + 1, dtype=np.int64)
    fill_arr = np.empty(n_terms, dtype=np.int64)
    order_arr = np.empty(n_tok, dtype=np.int64)
    rows_arr = np.empty(n_tok, dtype=np.uint32)
    tfs_arr = np.empty(n_tok, dtype=np.uint32)
    post_offsets_arr = np.zeros(n_terms + 1, dtype=np.int64)
    positions_arr = np.empty(n_tok if with_positions else 0, dtype=np.uint32)
    pos_offsets_arr = np.zeros(n_tok + 1 if with_positions else 0, dtype=np.int64)
    cdef int64_t[::1] tok_offsets = tok_offsets_arr, fill = fill_arr, order = order_arr
    cdef int64_t[::1] post_offsets = post_offsets_arr, pos_offsets = pos_offsets_arr
    cdef uint32_t[::1] rows = rows_arr, tfs = tfs_arr, positions = positions_arr
    cdef Py_ssize_t i, t, n_post
    with nogil:
        for i in range(n_tok):
            tok_offsets[term[i] + 1] += 1
        for t in range(n_terms):
            tok_offsets[t + 1] += tok_offsets[t]
            fill[t] = tok_offsets[t]
        for i in range(n_tok):
            t = term[i]
            order[fill[t]] = i
            fill[t] += 1
        if with_positions:  # (the loop compiled once with positions, once without)
            n_post = _postings(True, &local_rows[0], &pos[0], &order[0], &tok_offsets[0], n_terms, &rows[0], &tfs[0],
                               &post_offsets[0], &pos_offsets[0], &positions[0])
            pos_offsets[n_post] = n_tok
        else:
            n_post = _postings(False, &local_rows[0], &pos[0], &order[0], &tok_offsets[0], n_terms, &rows[0],
                               &tfs[0], &post_offsets[0], &pos_offsets[0], &positions[0])
    rows = tfs = pos_offsets = None  # (nothing views the arrays now: they may shrink in place)
    if with_positions:
        pos_offsets_arr = fitted(pos_offsets_arr, n_post + 1)
    return post_offsets_arr, fitted(rows_arr, n_post), fitted(tfs_arr, n_post), pos_offsets_arr, positions_arr


cdef inline Py_ssize_t _postings(bint with_positions, const row_id* local_rows, const int32_t* pos,
                                 const int64_t* order, const int64_t* tok_offsets, Py_ssize_t n_terms,
                                 uint32_t* rows, uint32_t* tfs, int64_t* post_offsets, int64_t* pos_offsets,
                                 uint32_t* positions) noexcept nogil:
    """Each term's tokens (``order``, by term, rows ascending) as postings: one per run of
    a row, its tf the run's length (and its positions, when ``with_positions``). Returns
    the number of postings."""
    cdef Py_ssize_t i, k, t, p = -1
    cdef int64_t r, prev
    for t in range(n_terms):
        prev = -1
        for k in range(tok_offsets[t], tok_offsets[t + 1]):
            i = order[k]
            r = local_rows[i]
            if r != prev:
                p += 1
                rows[p] = <uint32_t>r
                tfs[p] = 1
                prev = r
                if with_positions:
                    pos_offsets[p] = k
            else:
                tfs[p] += 1
            if with_positions:
                positions[k] = <uint32_t>pos[i]
        post_offsets[t + 1] = p + 1
    return p + 1


def block_metadata(const int64_t[::1] post_offsets, const uint32_t[::1] rows, const uint32_t[::1] tfs,
                   const uint32_t[::1] dl, int64_t block_size):
    """Per block of ``block_size`` postings of each term: ``BLOCK_IMPACTS`` (tf, dl)
    *impact points* and its last row — what block-max pruning needs to bound a block's
    best score at query time.

    Every posting of a block is dominated by one of its points (a tf at least its tf, a
    length at most its length), so the best score over the points bounds the block's,
    whatever the statistics. The points are the block's Pareto frontier of (high tf,
    short length), merged while longer than ``BLOCK_IMPACTS`` by replacing the two
    neighbours whose merge loosens the bound least (at the segment's own average length)
    with their corner (the higher tf, the shorter length). One (max tf, min length) point,
    what earlier segments kept, let a frequent term's top-10 skip 5% of its blocks on the
    benchmark corpus; these points let it skip 99%.

    Returns ``(block_offsets int64[V+1], impact_tf uint16[B*I], impact_dl uint16[B*I],
    last_row uint32[B])``, block ``j``'s points at ``[j*I, (j+1)*I)`` (repeated to fill;
    tf and dl saturated at ``IMPACT_MAX``).
    """
    cdef Py_ssize_t n_terms = post_offsets.shape[0] - 1
    block_offsets_arr = np.zeros(n_terms + 1, dtype=np.int64)
    cdef int64_t[::1] block_offsets = block_offsets_arr
    cdef Py_ssize_t t, i
    with nogil:
        for t in range(n_terms):
            block_offsets[t + 1] = block_offsets[t] + (post_offsets[t + 1] - post_offsets[t] + block_size - 1) // block_size
    cdef int64_t n_blocks = block_offsets[n_terms]
    impact_tf_arr = np.zeros(n_blocks * BLOCK_IMPACTS, dtype=np.uint16)
    impact_dl_arr = np.zeros(n_blocks * BLOCK_IMPACTS, dtype=np.uint16)
    last_row_arr = np.zeros(n_blocks, dtype=np.uint32)
    keys_arr = np.empty(block_size, dtype=np.uint64)
    ptf_arr = np.empty(block_size, dtype=np.float64)
    pdl_arr = np.empty(block_size, dtype=np.float64)
    cdef uint16_t[::1] impact_tf = impact_tf_arr, impact_dl = impact_dl_arr
    cdef uint32_t[::1] last_row = last_row_arr
    cdef uint64_t[::1] keys = keys_arr
    cdef double[::1] ptf = ptf_arr, pdl = pdl_arr
    cdef double by_tf[_TF_BUCKETS]
    cdef int64_t n_docs = 0, b, s, e, j, m, at
    cdef uint32_t top, tf
    cdef double total = 0.0, avgdl, shortest, d, best, loose
    with nogil:
        for i in range(dl.shape[0]):
            if dl[i] > 0:
                n_docs += 1
                total += dl[i]
        avgdl = total / n_docs if n_docs else 1.0
        for t in range(n_terms):
            b = block_offsets[t]
            s = post_offsets[t]
            while s < post_offsets[t + 1]:
                e = min(s + block_size, post_offsets[t + 1])
                top = 0
                for j in range(s, e):
                    top = max(top, tfs[j])
                m = 0
                shortest = INFINITY
                if top < _TF_BUCKETS:  # (the usual case: the shortest length per tf, no sort)
                    for tf in range(top + 1):
                        by_tf[tf] = INFINITY
                    for j in range(s, e):
                        d = dl[rows[j]]
                        if d < by_tf[tfs[j]]:
                            by_tf[tfs[j]] = d
                    for tf in range(top, 0, -1):  # the frontier: tf descending, length descending
                        if by_tf[tf] < shortest:
                            ptf[m] = tf
                            pdl[m] = by_tf[tf]
                            m += 1
                            shortest = by_tf[tf]
                else:
                    for j in range(e - s):  # tf descending, then length ascending: one sort key
                        keys[j] = (<uint64_t>(0xFFFFFFFFu - tfs[s + j]) << 32) | dl[rows[s + j]]
                    _sort(&keys[0], e - s)
                    for j in range(e - s):
                        d = keys[j] & 0xFFFFFFFFu
                        if d < shortest:
                            ptf[m] = 0xFFFFFFFFu - <uint32_t>(keys[j] >> 32)
                            pdl[m] = d
                            m += 1
                            shortest = d
                while m > BLOCK_IMPACTS:
                    best, at = INFINITY, 0
                    for j in range(m - 1):
                        loose = _factor(ptf[j], pdl[j + 1], avgdl) - max(
                            _factor(ptf[j], pdl[j], avgdl), _factor(ptf[j + 1], pdl[j + 1], avgdl)
                        )
                        if loose < best:
                            best, at = loose, j
                    pdl[at] = pdl[at + 1]  # (the corner: this tf, the next point's length)
                    for j in range(at + 1, m - 1):
                        ptf[j] = ptf[j + 1]
                        pdl[j] = pdl[j + 1]
                    m -= 1
                for j in range(BLOCK_IMPACTS):
                    impact_tf[b * BLOCK_IMPACTS + j] = <uint16_t>min(ptf[min(j, m - 1)], <double>IMPACT_MAX)
                    impact_dl[b * BLOCK_IMPACTS + j] = <uint16_t>min(pdl[min(j, m - 1)], <double>IMPACT_MAX)
                last_row[b] = rows[e - 1]
                b += 1
                s = e
    return block_offsets_arr, impact_tf_arr, impact_dl_arr, last_row_arr


cdef inline double _factor(double tf, double dl, double avgdl) noexcept nogil:
    return tf / (tf + _REF_K1 * ((1.0 - _REF_B) + _REF_B * dl / avgdl))


cdef inline void _sort(uint64_t* keys, Py_ssize_t n) noexcept nogil:
    """Sorts ``keys[:n]`` ascending in place: a heap sort, in line (qsort's call per
    comparison cost 15 % more than numba's sort; a block has at most ``block_size`` keys)."""
    cdef Py_ssize_t start, end
    for start in range(n // 2 - 1, -1, -1):
        _sift(keys, start, n)
    for end in range(n - 1, 0, -1):
        keys[0], keys[end] = keys[end], keys[0]
        _sift(keys, 0, end)


cdef inline void _sift(uint64_t* keys, Py_ssize_t c, Py_ssize_t n) noexcept nogil:
    """Moves ``keys[c]`` down the max-heap ``keys[:n]`` to its place."""
    cdef uint64_t key = keys[c]
    cdef Py_ssize_t w
    while True:
        w = 2 * c + 1
        if w >= n:
            break
        if w + 1 < n and keys[w + 1] > keys[w]:
            w += 1
        if keys[w] <= key:
            break
        keys[c] = keys[w]
        c = w
    keys[c] = key
