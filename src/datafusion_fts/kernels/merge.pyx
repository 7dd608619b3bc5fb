"""Linear merges of sorted row-id lists carrying scores: the algebra the query tree is
evaluated with (operators/evaluate.py). One compiled merge walks both lists once; ``mode``
picks what survives and how scores combine, always in the canonical order "left, then
right". Beside them: the phrase counts evaluated over candidate rows' positions, and the
top k of scored rows (operators/ordering.py).
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint32_t

from datafusion_fts.kernels.arrays cimport fitted
from datafusion_fts.kernels.topk_heap cimport heap_drain, heap_push, java_key

cpdef enum:
    UNION_ADD = 0  # rows of either; left + right where both, 0.0 + right where only right
    ADD_PRESENT = 2  # rows of left; left + right where right has the row
    SUBTRACT = 3  # rows of left that right lacks
    BOOST = 4  # rows of left; left - weight * right where right has the row

# Token positions: a segment's uint32, or int64 (the text functions' streams).
ctypedef fused position:
    uint32_t
    int64_t

# (merge allocates its results with these: a short merge's cost is mostly its call)
cdef object _empty = np.empty
cdef object _INT64 = np.dtype(np.int64), _FLOAT64 = np.dtype(np.float64)

# ``marks`` of sloppy_phrase_tf when no positions are recorded.
NO_MARKS = np.zeros(0, dtype=np.uint8)


cdef inline Py_ssize_t _first_above(const position* arr, Py_ssize_t lo, Py_ssize_t hi, int64_t value) noexcept nogil:
    """The first index in [lo, hi) with ``arr[i] > value`` (``hi`` if none), by binary
    search: a phrase's next position past another term's."""
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if <int64_t>arr[mid] <= value:
            lo = mid + 1
        else:
            hi = mid
    return lo


def merge(int mode, const int64_t[::1] a_rows, const double[::1] a_sc, const int64_t[::1] b_rows,
          const double[::1] b_sc, double weight):
    """The rows and scores ``mode`` keeps of lists ``a`` and ``b`` (rows ascending)."""
    cdef Py_ssize_t na = a_rows.shape[0], nb = b_rows.shape[0]
    cdef Py_ssize_t cap = na + nb if mode == UNION_ADD else na
    rows_arr = _empty(cap, _INT64)
    sc_arr = _empty(cap, _FLOAT64)
    cdef int64_t[::1] rows = rows_arr
    cdef double[::1] sc = sc_arr
    cdef const int64_t* ar = &a_rows[0]
    cdef const int64_t* br = &b_rows[0]
    cdef const double* asc = &a_sc[0]
    cdef const double* bsc = &b_sc[0]
    cdef Py_ssize_t k
    with nogil:  # (one loop per mode, each compiled with its mode a constant)
        if mode == UNION_ADD:
            k = _merge(UNION_ADD, ar, asc, na, br, bsc, nb, weight, &rows[0], &sc[0])
        elif mode == ADD_PRESENT:
            k = _merge(ADD_PRESENT, ar, asc, na, br, bsc, nb, weight, &rows[0], &sc[0])
        elif mode == SUBTRACT:
            k = _merge(SUBTRACT, ar, asc, na, br, bsc, nb, weight, &rows[0], &sc[0])
        else:
            k = _merge(BOOST, ar, asc, na, br, bsc, nb, weight, &rows[0], &sc[0])
    rows = sc = None  # (nothing views the arrays now: they may shrink in place)
    return fitted(rows_arr, k), fitted(sc_arr, k)


def merge_rows(int mode, const int64_t[::1] a_rows, const int64_t[::1] b_rows):
    """The rows ``mode`` (UNION_ADD: either list's; SUBTRACT: a's that b lacks) keeps of
    lists ``a`` and ``b`` (rows ascending, distinct), without scores: a match set's rows
    (planner/count_matches.py), where :func:`merge` would carry a zero score a row."""
    cdef Py_ssize_t na = a_rows.shape[0], nb = b_rows.shape[0]
    rows_arr = _empty(na + nb if mode == UNION_ADD else na, _INT64)
    cdef int64_t[::1] rows = rows_arr
    cdef Py_ssize_t i = 0, j = 0, k = 0
    cdef int64_t x, y
    with nogil:  # (without branches on the rows' order: which list moves is data, not a jump)
        if mode == UNION_ADD:
            while i < na and j < nb:
                x = a_rows[i]
                y = b_rows[j]
                rows[k] = x if x <= y else y
                k += 1
                i += x <= y
                j += y <= x
        else:
            while i < na and j < nb:
                x = a_rows[i]
                y = b_rows[j]
                rows[k] = x
                k += x < y
                i += x <= y
                j += y <= x
        while i < na:
            rows[k] = a_rows[i]
            k += 1
            i += 1
        while mode == UNION_ADD and j < nb:
            rows[k] = b_rows[j]
            k += 1
            j += 1
    rows = None  # (nothing views the array now: it may shrink in place)
    return fitted(rows_arr, k)


cdef inline Py_ssize_t _merge(int mode, const int64_t* a_rows, const double* a_sc, Py_ssize_t na,
                              const int64_t* b_rows, const double* b_sc, Py_ssize_t nb, double weight,
                              int64_t* rows, double* sc) noexcept nogil:
    """Merges the lists into ``rows``/``sc``; returns how many rows it wrote."""
    cdef Py_ssize_t i = 0, j = 0, k = 0
    while i < na or j < nb:
        if j >= nb or (i < na and a_rows[i] < b_rows[j]):
            rows[k] = a_rows[i]
            sc[k] = a_sc[i]
            k += 1
            i += 1
        elif i >= na or b_rows[j] < a_rows[i]:
            if mode == UNION_ADD:
                rows[k] = b_rows[j]
                sc[k] = 0.0 + b_sc[j]
                k += 1
            elif i >= na:
                break
            j += 1
        else:
            if mode != SUBTRACT:
                rows[k] = a_rows[i]
                if mode == BOOST:  # left - weight * right, written as numba's LLVM
                    sc[k] = (-b_sc[j]) * weight + a_sc[i]  # evaluated it: even a NaN's sign matches
                else:
                    sc[k] = a_sc[i] + b_sc[j]
                k += 1
            i += 1
            j += 1
    return k


def run_sums(const double[::1] values, const int64_t[::1] starts):
    """The sum of each run ``values[starts[i]:starts[i + 1]]`` (the last to the end), as
    successive UNION_ADD merges add it: 0.0 plus its first value, then each next, left to
    right."""
    cdef Py_ssize_t n = values.shape[0], n_runs = starts.shape[0]
    out_arr = np.empty(n_runs, dtype=np.float64)
    cdef double[::1] out = out_arr
    cdef Py_ssize_t i, j, end
    cdef double acc
    with nogil:
        for i in range(n_runs):
            end = starts[i + 1] if i + 1 < n_runs else n
            acc = 0.0 + values[starts[i]]
            for j in range(starts[i] + 1, end):
                acc = acc + values[j]
            out[i] = acc
    return out_arr


def phrase_tf(const int64_t[:, ::1] starts, const int64_t[:, ::1] ends, const position[::1] positions,
              int64_t slop, const int64_t[::1] offsets):
    """Matching start positions per candidate row.

    ``starts[k, c]:ends[k, c]`` is the ascending slice of ``positions`` holding term k's
    positions in candidate c; ``offsets[k]`` is term k's place in the phrase (0, 1, 2, ...,
    or with the gap the tokenizer leaves between two runs of grams). A start p1 of term 0
    matches if later terms occur at p_k >= p_(k-1) + offsets[k] - offsets[k-1] with
    pn - p1 - (offsets[n-1] - offsets[0]) <= slop; taking each next position as early as
    possible minimises pn, so the greedy walk decides every start exactly.
    """
    cdef Py_ssize_t n_terms = starts.shape[0], n_cand = starts.shape[1]
    tf_arr = np.zeros(n_cand, dtype=np.int64)
    cdef int64_t[::1] tf = tf_arr
    cdef const position* pos = &positions[0]
    cdef Py_ssize_t c, s, t, lo
    cdef int64_t count, p1, cur
    cdef bint ok
    with nogil:
        for c in range(n_cand):
            count = 0
            for s in range(starts[0, c], ends[0, c]):
                p1 = pos[s]
                cur = p1
                ok = True
                for t in range(1, n_terms):
                    lo = _first_above(pos, starts[t, c], ends[t, c], cur + offsets[t] - offsets[t - 1] - 1)
                    if lo >= ends[t, c]:
                        ok = False
                        break
                    cur = pos[lo]
                if not ok:
                    break  # later starts need even later positions: none match
                if cur - p1 - (offsets[n_terms - 1] - offsets[0]) <= slop:
                    count += 1
            tf[c] = count
    return tf_arr


def sloppy_phrase_tf(const int64_t[:, ::1] starts, const int64_t[:, ::1] ends, const position[::1] positions,
                     int64_t slop, const int64_t[::1] later, uint8_t[::1] marks, const int64_t[::1] offsets):
    """Sloppy matches per candidate row, the terms in any order (Lucene's sloppy scan;
    docs/design.md: "Compound queries").

    ``starts``/``ends``/``positions``/``offsets`` as for :func:`phrase_tf`; term k is read
    at its positions shifted by its offset (p - offsets[k]). ``later[k]`` is the next phrase offset holding
    the same term as k (-1 for none): those occurrences share one slice and take distinct
    positions in phrase order. Each step, the term with the smallest shifted position
    (ties: the smaller offset) leads; it moves to its last shifted position not past the
    next smallest, and a match is counted when the largest shifted position minus the
    lead's is at most ``slop``; then the lead steps once more (pushing a later occurrence
    of its term past it). The row ends when a term runs out. ``marks`` is empty
    (``NO_MARKS``), or one flag per entry of ``positions`` (a bool mask viewed as uint8),
    set for the positions of every counted match.
    """
    cdef Py_ssize_t n_terms = starts.shape[0], n_cand = starts.shape[1]
    tf_arr = np.zeros(n_cand, dtype=np.int64)
    cur_arr = np.empty(n_terms, dtype=np.int64)
    cdef int64_t[::1] tf = tf_arr, cur = cur_arr
    cdef const position* pos = &positions[0]
    cdef bint record = marks.shape[0] > 0, alive, first
    cdef Py_ssize_t c, k, j, lead
    cdef int64_t count, lead_at, following, top, shifted
    with nogil:
        for c in range(n_cand):
            if n_terms == 1:
                tf[c] = ends[0, c] - starts[0, c]
                if record:
                    for j in range(starts[0, c], ends[0, c]):
                        marks[j] = True
                continue
            for k in range(n_terms):
                cur[k] = starts[k, c]
            alive = True
            for k in range(n_terms):  # each repeat of a term one position after the previous
                j = later[k]
                if j >= 0 and cur[j] <= cur[k]:
                    cur[j] = cur[k] + 1
                if cur[k] >= ends[k, c]:
                    alive = False
            count = 0
            while alive:
                lead = 0
                lead_at = pos[cur[0]]
                for k in range(1, n_terms):
                    if <int64_t>pos[cur[k]] - offsets[k] < lead_at - offsets[lead]:
                        lead = k
                        lead_at = pos[cur[k]]
                following = 0
                top = 0
                first = True
                for k in range(n_terms):
                    if k != lead:
                        shifted = <int64_t>pos[cur[k]] - offsets[k]
                        if first or shifted < following:
                            following = shifted
                        if first or shifted > top:
                            top = shifted
                        first = False
                # the lead's last position whose shifted value is <= following
                cur[lead] = _first_above(pos, cur[lead] + 1, ends[lead, c], following + offsets[lead]) - 1
                if top - (<int64_t>pos[cur[lead]] - offsets[lead]) <= slop:
                    count += 1
                    if record:
                        for k in range(n_terms):
                            marks[cur[k]] = True
                cur[lead] += 1
                if cur[lead] >= ends[lead, c]:
                    break
                k = lead
                j = later[k]
                while j >= 0 and cur[j] <= cur[k]:
                    cur[j] = cur[k] + 1
                    if cur[j] >= ends[j, c]:
                        alive = False
                        break
                    k = j
                    j = later[k]
            tf[c] = count
    return tf_arr


def later_occurrences(terms: tuple[str, ...] | list[str]) -> np.ndarray:
    """``later`` of :func:`sloppy_phrase_tf`: per phrase offset, the next offset with the
    same term, or -1."""
    out = np.full(len(terms), -1, dtype=np.int64)
    last: dict[str, int] = {}
    for k in range(len(terms) - 1, -1, -1):
        out[k] = last.get(terms[k], -1)
        last[terms[k]] = k
    return out


def top_k(const int64_t[::1] rows, const double[::1] scores, Py_ssize_t k):
    """Indices of the best ``k`` entries, best first, in the total order of docs/design.md: "Order,
    top-k and paging" (the shared bounded heap of ``topk_heap.pxd``, keyed by Java-order score
    keys)."""
    k = min(k, rows.shape[0])
    keys_arr = np.empty(k, dtype=np.int64)
    heap_rows_arr = np.empty(k, dtype=np.int64)
    index_arr = np.empty(k, dtype=np.int64)
    cdef int64_t[::1] keys = keys_arr, heap_rows = heap_rows_arr, index = index_arr
    cdef Py_ssize_t size = 0, i
    with nogil:
        for i in range(rows.shape[0]):
            size = heap_push(&keys[0], &heap_rows[0], &index[0], size, k, java_key(scores[i]), rows[i], <int64_t>i)
        heap_drain(&keys[0], &heap_rows[0], &index[0], size)
    return index_arr[:size]
