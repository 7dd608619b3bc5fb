"""Top-k of a disjunction of terms over one segment part, with block-max pruning (MaxScore).

Rows are visited in row order (DAAT). A row's score is the conjunction kernel's formula
(conjunction.pyx): ``acc = 0.0``, plus ``((w_t * tf) / (tf + norm)) * m_t`` for each
present slot in query order, times ``boost``. That is the evaluator's order for
``Match(operator="or")`` (m_t = 1; every term score is positive, so ``0.0 + s == s``) and
for a ``Boolean`` of one-term SHOULD clauses (m_t = the clause boosts). EXCLUDED slots
(MUST_NOT terms), deleted rows and a prefilter remove rows; the exclusions are sought only
for a row that would enter the top k (the others cannot, excluded or not).

Pruning (when every slot's ``m_t * boost`` is positive): slots are split by their score
upper bounds: those whose bounds sum to at most the current k-th score (the threshold)
cannot lift a row into the top k alone, so only rows of the other ("essential") slots are
candidates, and the rest are probed at those rows. Per-block bounds skip whole blocks
whose rows cannot beat the threshold.

The threshold may start above -inf: ``floor``, the k-th score earlier parts of the
segment set already hold. Parts are disjoint row ranges visited in ascending order, so
every row here has a larger row id than theirs, and a row that does not beat ``floor``
cannot be in the global top k (a tie ranks below, docs/design.md: "Order, top-k and paging"); this
part then prunes from its first posting instead of from its k-th row.

Exactness: a row is skipped only if its upper bound is <= the threshold. Rows are visited
in ascending row id, so a skipped row tying the k-th score has a larger row id than every
kept row and ranks below them (docs/design.md: "Order, top-k and paging"). Block bounds
(``blk_bound``: the block's best ``tf / (tf + norm)`` at its max tf and min length, from the query's
statistics) carry a relative margin far above float64 rounding, and kept rows are scored with the
canonical operations, so results are bit-identical to exhaustive scoring.
"""

import numpy as np

from libc.math cimport INFINITY
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from datafusion_fts.kernels.buffers cimport Arrays, f64, f64_out, i64_out, release
from datafusion_fts.kernels.conjunction cimport EXCLUDED, Slots, slots_of
from datafusion_fts.kernels.invert cimport BLOCK_SIZE
from datafusion_fts.kernels.postings_codec cimport Source, source_of
from datafusion_fts.kernels.posting_cursor cimport (
    PAST_ROWS, Cursors, Moved, cursors_alloc, cursors_free, decode_to, gallop, reach, row, seek, slot_ranges,
    start_cursors, tf_at,
)
from datafusion_fts.kernels.topk_heap cimport heap_push, heap_results, java_key

from datafusion_fts.kernels.postings_codec import BAD_ROWS, DamagedPostings


def pruned_or_topk(
    words, block_words, block_bits, rows, tfs, blk_last, ords, post_offsets, block_offsets, blk_bound, norms, tids,
    kinds, weights, mults, double boost, int64_t k, int64_t row_lo, int64_t row_hi, int64_t base, included,
    bint use_include, deleted, bint prune, double floor,
):
    """Top ``k`` rows among local rows [row_lo, row_hi) of the disjunction, best first, as
    row ids (local row + ``base``), among those scoring above ``floor`` (-inf: all; only
    with ``prune``).

    Arguments as in conjunction.pyx's ``conjunction_topk``; ``blk_bound`` (float64) holds
    every block's bound factor (empty without ``prune``), so slot t's block j is bounded
    by ``weights[t] * mults[t] * blk_bound[j]``. ``prune`` requires ``mults[t] * boost >
    0`` for every scored slot. Returns (row ids, scores, postings_scored, blocks_skipped,
    postings of the slots' terms).
    """
    cdef Arrays held
    cdef Source src
    cdef Slots a
    cdef const double* blk_bound_
    cdef int64_t* out_rows
    cdef double* out_scores
    cdef Py_ssize_t n, n_bounds, t, n_scored = 0
    cdef int64_t* slots = NULL  # starts, ends, blk0s, cursors, slots by bound
    cdef int64_t* keys = NULL  # the heap's
    cdef double* floats = NULL  # bound weights, term bounds, their prefix sums
    cdef uint8_t* essential = NULL
    cdef int64_t* starts
    cdef int64_t* ends
    cdef int64_t* blk0s
    cdef int64_t* cur
    cdef int64_t total = 0, single = -1, upper = 0  # (upper: most rows that can match)
    cdef int64_t size = 0, scored = 0, skipped = 0
    cdef bint excludes
    cdef Cursors cs
    held.n = 0
    cs.row_block = NULL
    try:
        src = source_of(&held, words, block_words, block_bits, rows, tfs, blk_last, ords)
        a = slots_of(&held, post_offsets, block_offsets, norms, tids, kinds, weights, mults, included, deleted)
        blk_bound_, n = f64(&held, blk_bound, &n_bounds), a.n
        slots = <int64_t*>malloc(5 * max(n, 1) * sizeof(int64_t))
        floats = <double*>calloc(3 * (n + 1), sizeof(double))
        essential = <uint8_t*>malloc(max(n, 1))
        if slots == NULL or floats == NULL or essential == NULL or not cursors_alloc(&cs, n):
            raise MemoryError()
        starts, ends, blk0s, cur = slots, slots + n, slots + 2 * n, slots + 3 * n
        memset(essential, 1, n)
        slot_ranges(a.post_offsets, a.block_offsets, a.tids, n, starts, ends, blk0s)
        for t in range(n):
            total += ends[t] - starts[t]
            if a.kinds[t] != EXCLUDED:
                upper += ends[t] - starts[t]
                n_scored += 1
                single = t
        excludes = n_scored < n
        k = min(k, upper)
        out_rows_a = np.empty(k, dtype=np.int64)
        out_scores_a = np.empty(k, dtype=np.float64)
        out_rows, out_scores = i64_out(&held, out_rows_a), f64_out(&held, out_scores_a)
        keys = <int64_t*>malloc(max(k, 1) * sizeof(int64_t))
        if keys == NULL:
            raise MemoryError()
        with nogil:
            start_cursors(&src, &cs, starts, ends, blk0s, n, row_lo)
            for t in range(n):
                cur[t] = seek(&src, &cs, t, starts[t], ends[t], blk0s[t], starts[t], row_lo, True).cur
            if k == 0:
                pass
            elif n_scored == 1:
                size = _single(
                    &src, &cs, blk_bound_, a.norms, a.kinds, n, starts, ends, blk0s, a.weights, a.mults, boost, row_hi,
                    a.included, a.n_inc, use_include, a.deleted, a.n_del, prune, excludes, cur, single, keys, out_rows,
                    out_scores, k, floor, &scored, &skipped,
                )
            else:
                _by_bound(blk_bound_, n_bounds, a.kinds, n, starts, ends, blk0s, a.weights, a.mults, boost, n_scored,
                          slots + 4 * n, floats, floats + (n + 1), floats + 2 * (n + 1))
                size = _maxscore(
                    &src, &cs, blk_bound_, a.norms, a.kinds, n, starts, ends, blk0s, a.weights, a.mults, boost, row_hi,
                    a.included, a.n_inc, use_include, a.deleted, a.n_del, prune, excludes, cur, keys, out_rows, out_scores,
                    k, floor, slots + 4 * n, n_scored, floats + 2 * (n + 1), floats, essential, &scored, &skipped,
                )
            if not cs.damaged:
                heap_results(keys, out_rows, out_scores, size, base)
        if cs.damaged:
            raise DamagedPostings(BAD_ROWS)
    finally:
        cursors_free(&cs)
        free(slots)
        free(floats)
        free(essential)
        free(keys)
        release(&held)
    return out_rows_a[:size], out_scores_a[:size], scored, skipped, total


cdef bint _excluded(const Source* src, Cursors* cs, const int64_t* kinds, Py_ssize_t n, const int64_t* starts,
                    const int64_t* ends, const int64_t* blk0s, int64_t* cur, int64_t d, bint skip,
                    int64_t* skipped) noexcept nogil:
    """Whether row d is in an EXCLUDED slot (``skipped``: plus the blocks skipped moving
    those cursors to d). Asked only for a row that would enter the top k: an exclusion
    list is sought per row asked, so asking every row costs more than scoring it."""
    cdef Py_ssize_t t
    cdef Moved m
    for t in range(n):
        if kinds[t] == EXCLUDED:
            m = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
            cur[t] = m.cur
            skipped[0] += m.skipped
            if m.cur < ends[t] and row(cs, t, starts[t], m.cur) == d:
                return True
    return False


cdef Py_ssize_t _single(
    const Source* src, Cursors* cs, const double* blk_bound, const double* norms, const int64_t* kinds,
    Py_ssize_t n, const int64_t* starts, const int64_t* ends, const int64_t* blk0s, const double* weights,
    const double* mults, double boost, int64_t row_hi, const int64_t* included, Py_ssize_t n_inc, bint use_include,
    const int64_t* deleted, Py_ssize_t n_del, bint prune, bint excludes, int64_t* cur, int64_t t, int64_t* keys,
    int64_t* out_rows, double* out_scores, Py_ssize_t k, double floor, int64_t* scored_out, int64_t* skipped_out,
) noexcept nogil:
    """One scored slot: block at a time, skipping blocks whose bound cannot beat the
    threshold. Returns the heap's size (``scored_out``, ``skipped_out``: postings scored,
    blocks skipped)."""
    cdef Py_ssize_t size = 0
    cdef int64_t scored = 0, skipped = 0, ic = 0, dc = 0
    cdef double theta = floor  # then the k-th score held, once k rows are (never below floor)
    cdef int64_t start = starts[t], end = ends[t], blk0 = blk0s[t]
    cdef double w = weights[t], m = mults[t]
    cdef double bound_w = w * m * boost
    cdef bint plain = not use_include and not n_del and not excludes  # (every row of the list is scored)
    cdef int64_t i = cur[t], blk, block_end, first, j, d
    cdef const uint32_t* rows = cs.rows + t * BLOCK_SIZE
    cdef const uint32_t* tfs = cs.tfs + t * BLOCK_SIZE
    cdef double freq, score
    cdef Moved mv
    while i < end:
        blk = blk0 + (i - start) // BLOCK_SIZE
        block_end = min(start + (blk - blk0 + 1) * BLOCK_SIZE, end)
        if prune and bound_w * blk_bound[blk] <= theta:
            skipped += 1
            i = block_end
            continue
        if cs.row_block[t] != blk or cs.decoded[t] < block_end:
            decode_to(src, cs, t, start, end, blk0, i, PAST_ROWS)
        tf_at(src, cs, t, start, end, blk0, i)  # (the block's frequencies: its rows are all scored)
        first = start + (blk - blk0) * BLOCK_SIZE
        if plain and <int64_t>src.blk_last[blk] < row_hi:
            # Every row of the block is scored: one tight loop (most of a frequent term).
            for j in range(i - first, block_end - first):
                d = rows[j]
                freq = tfs[j]
                score = (0.0 + ((w * freq) / (freq + norms[d])) * m) * boost
                if not prune or score > theta:
                    size = heap_push(keys, out_rows, out_scores, size, k, java_key(score), d, score)
                    if prune and size == k:
                        theta = out_scores[0]
            scored += block_end - i
            i = block_end
            continue
        while i < block_end:
            d = rows[i - first]
            if d >= row_hi:
                scored_out[0], skipped_out[0] = scored, skipped
                return size
            if use_include:
                ic = gallop(included, ic, n_inc, d)
                if ic >= n_inc:
                    scored_out[0], skipped_out[0] = scored, skipped
                    return size
                if included[ic] != d:
                    mv = seek(src, cs, t, start, end, blk0, i, included[ic], True)
                    i = mv.cur
                    skipped += mv.skipped
                    break  # re-enter the block loop at the new position
            if n_del:
                dc = gallop(deleted, dc, n_del, d)
                if dc < n_del and deleted[dc] == d:
                    i += 1
                    continue
            i += 1
            freq = tfs[i - 1 - first]
            score = (0.0 + ((w * freq) / (freq + norms[d])) * m) * boost
            scored += 1
            if prune and not score > theta:
                continue
            if excludes and _excluded(src, cs, kinds, n, starts, ends, blk0s, cur, d, prune, &skipped):
                continue
            size = heap_push(keys, out_rows, out_scores, size, k, java_key(score), d, score)
            if prune and size == k:
                theta = out_scores[0]
    scored_out[0], skipped_out[0] = scored, skipped
    return size


cdef void _by_bound(const double* blk_bound, Py_ssize_t n_bounds, const int64_t* kinds, Py_ssize_t n,
                    const int64_t* starts, const int64_t* ends, const int64_t* blk0s, const double* weights,
                    const double* mults, double boost, Py_ssize_t n_scored, int64_t* order, double* bound_w,
                    double* term_ub, double* prefix) noexcept nogil:
    """The scored slots by ascending upper bound into ``order`` (a prefix of them is
    non-essential), the running sums of their bounds into ``prefix``, and each slot's
    bound weight ``w_t * m_t * boost`` into ``bound_w`` (``term_ub``, zeroed: the slots'
    bounds). Without block bounds (no pruning) every bound is 0: the order is then not
    used."""
    cdef Py_ssize_t t, i
    cdef int64_t j, nb
    cdef double best
    for t in range(n):
        if kinds[t] == EXCLUDED:
            continue
        bound_w[t] = weights[t] * mults[t] * boost
        if n_bounds:
            nb = (ends[t] - starts[t] + BLOCK_SIZE - 1) // BLOCK_SIZE
            best = 0.0
            for j in range(blk0s[t], blk0s[t] + nb):
                if blk_bound[j] > best:
                    best = blk_bound[j]
            term_ub[t] = bound_w[t] * best
    _argsort(term_ub, order, n)
    i = 0
    for t in range(n):  # (the excluded slots dropped, in place)
        if kinds[order[t]] != EXCLUDED:
            order[i] = order[t]
            i += 1
    prefix[0] = 0.0
    for i in range(n_scored):
        prefix[i + 1] = prefix[i] + term_ub[order[i]]


cdef inline bint _lt(double a, double b) noexcept nogil:
    """``a < b``, NaNs last (numpy's sort order)."""
    return a < b or (b != b and a == a)


cdef void _argsort(const double* a, int64_t* r, Py_ssize_t n) noexcept nogil:
    """``r[:n] = np.argsort(a[:n])`` as numba's quicksort orders it (ties included, so the
    essential slots, and the metrics, are those it gave): insertion sort below 16 values,
    else median-of-three partitions."""
    cdef Py_ssize_t stack_lo[100]
    cdef Py_ssize_t stack_hi[100]
    cdef Py_ssize_t depth = 1, lo, hi, i, j, mid
    cdef int64_t x
    cdef double pivot, v
    for i in range(n):
        r[i] = i
    if n < 2:
        return
    stack_lo[0], stack_hi[0] = 0, n - 1
    while depth > 0:
        depth -= 1
        lo, hi = stack_lo[depth], stack_hi[depth]
        while hi - lo >= 15:
            mid = (lo + hi) >> 1
            if _lt(a[r[mid]], a[r[lo]]):
                r[lo], r[mid] = r[mid], r[lo]
            if _lt(a[r[hi]], a[r[mid]]):
                r[hi], r[mid] = r[mid], r[hi]
            if _lt(a[r[mid]], a[r[lo]]):
                r[lo], r[mid] = r[mid], r[lo]
            pivot = a[r[mid]]
            r[hi], r[mid] = r[mid], r[hi]
            i, j = lo, hi - 1
            while True:
                while i < hi and _lt(a[r[i]], pivot):
                    i += 1
                while j >= lo and _lt(pivot, a[r[j]]):
                    j -= 1
                if i >= j:
                    break
                r[i], r[j] = r[j], r[i]
                i += 1
                j -= 1
            r[i], r[hi] = r[hi], r[i]
            if hi - i > i - lo:  # push the larger part
                if hi > i:
                    stack_lo[depth], stack_hi[depth] = i + 1, hi
                    depth += 1
                hi = i - 1
            else:
                if i > lo:
                    stack_lo[depth], stack_hi[depth] = lo, i - 1
                    depth += 1
                lo = i + 1
        for i in range(lo + 1, hi + 1):
            x = r[i]
            v = a[x]
            j = i
            while j > lo and _lt(v, a[r[j - 1]]):
                r[j] = r[j - 1]
                j -= 1
            r[j] = x


cdef Py_ssize_t _maxscore(
    const Source* src, Cursors* cs, const double* blk_bound, const double* norms, const int64_t* kinds,
    Py_ssize_t n, const int64_t* starts, const int64_t* ends, const int64_t* blk0s, const double* weights,
    const double* mults, double boost, int64_t row_hi, const int64_t* included, Py_ssize_t n_inc, bint use_include,
    const int64_t* deleted, Py_ssize_t n_del, bint prune, bint excludes, int64_t* cur, int64_t* keys,
    int64_t* out_rows, double* out_scores, Py_ssize_t k, double floor, const int64_t* order, Py_ssize_t n_scored,
    const double* prefix, const double* bound_w, uint8_t* essential, int64_t* scored_out, int64_t* skipped_out,
) noexcept nogil:
    """Several scored slots: MaxScore over the essential slots (``order`` and ``prefix``
    from :func:`_by_bound`; ``essential`` all ones), block bounds per candidate. Returns
    the heap's size (``scored_out``, ``skipped_out``: postings scored, blocks skipped)."""
    cdef const uint32_t* blk_last = src.blk_last
    cdef Py_ssize_t size = 0, ess_from = 0, i, t  # order[ess_from:] are essential
    cdef double theta = floor  # then the k-th score held, once k rows are (never below floor)
    cdef int64_t scored = 0, skipped = 0, ic = 0, dc = 0, d, r, blk, skip_to, target, q
    cdef double ub, acc, norm, freq, score
    cdef bint candidate
    cdef Moved mv
    while prune and ess_from < n_scored and prefix[ess_from + 1] <= theta:
        essential[order[ess_from]] = 0
        ess_from += 1
    while True:
        # Candidate: the smallest current row among essential slots.
        d = row_hi
        for i in range(ess_from, n_scored):
            t = order[i]
            if cur[t] < ends[t]:
                r = row(cs, t, starts[t], cur[t])
                if r < d:
                    d = r
        if d >= row_hi:
            break
        if prune and theta > -INFINITY:
            # Bound every row up to the end of the essential slots' current blocks.
            ub = prefix[ess_from]
            skip_to = row_hi
            for i in range(ess_from, n_scored):
                t = order[i]
                if cur[t] < ends[t]:
                    blk = blk0s[t] + (cur[t] - starts[t]) // BLOCK_SIZE
                    ub += bound_w[t] * blk_bound[blk]
                    if blk_last[blk] < skip_to:
                        skip_to = blk_last[blk]
            if ub <= theta:
                for i in range(ess_from, n_scored):
                    t = order[i]
                    mv = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], skip_to + 1, True)
                    cur[t] = mv.cur
                    skipped += mv.skipped
                continue
        target = d + 1  # where the essential cursors at d go next
        candidate = True
        if use_include:
            ic = gallop(included, ic, n_inc, d)
            if ic >= n_inc:
                break
            if included[ic] != d:
                target = included[ic]
                candidate = False
        if candidate and n_del:
            dc = gallop(deleted, dc, n_del, d)
            candidate = dc >= n_del or deleted[dc] != d
        if candidate:
            # Exact score, canonical order over slots.
            acc = 0.0
            norm = norms[d]
            for t in range(n):
                if kinds[t] == EXCLUDED:
                    continue
                if essential[t] == 0:
                    cur[t] = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, True).cur
                q = cur[t]
                if q < ends[t] and row(cs, t, starts[t], q) == d:
                    freq = tf_at(src, cs, t, starts[t], ends[t], blk0s[t], q)
                    acc = acc + ((weights[t] * freq) / (freq + norm)) * mults[t]
                    scored += 1
            score = acc * boost
            if (not prune or score > theta) and not (
                excludes and _excluded(src, cs, kinds, n, starts, ends, blk0s, cur, d, prune, &skipped)
            ):
                size = heap_push(keys, out_rows, out_scores, size, k, java_key(score), d, score)
            if prune and size == k:
                theta = out_scores[0]
                while ess_from < n_scored and prefix[ess_from + 1] <= theta:
                    essential[order[ess_from]] = 0
                    ess_from += 1
        for i in range(ess_from, n_scored):
            t = order[i]
            if cur[t] < ends[t] and row(cs, t, starts[t], cur[t]) < target:
                if target == d + 1:
                    cur[t] += 1
                    if cur[t] < ends[t] and cur[t] >= cs.decoded[t]:
                        reach(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], PAST_ROWS)
                else:
                    mv = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], target, True)
                    cur[t] = mv.cur
                    skipped += mv.skipped
    scored_out[0], skipped_out[0] = scored, skipped
    return size
