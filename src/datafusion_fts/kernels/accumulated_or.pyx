"""Top-k of a disjunction of many terms over one segment part, a term at a time: each
scored slot's postings are added into one score per row of the part, then the best k rows
are taken.

Why beside MaxScore (pruned_or.pyx): that kernel looks at every slot for every candidate
row, so its cost grows with rows times slots (an OR of 10,000 terms over 20,000 rows took
4 s); accumulating costs the slots' postings plus the part's rows. It gives up skipping,
which pays with a few terms and a large part, so operators/terms/term_topk.py uses it only past
``ACCUMULATE_SLOTS`` scored slots.

Scores are the conjunction kernel's formula (conjunction.pyx) with the same operations in
the same order: a row's sum starts at 0.0 and adds ``((w_t * tf) / (tf + norm)) * m_t``
for each present slot in slot order (slot t's postings are all added before slot t+1's),
times ``boost``; so results are bit-identical to the other kernels'. A row of an EXCLUDED
slot, a deleted row or one outside the prefilter is not ranked; nor, as there, one not
scoring above ``floor``.
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc

from datafusion_fts.kernels.buffers cimport Arrays, f64_out, i64_out, release
from datafusion_fts.kernels.conjunction cimport EXCLUDED, Slots, slots_of
from datafusion_fts.kernels.postings_codec cimport Source, source_of
from datafusion_fts.kernels.posting_cursor cimport (
    PAST_ROWS, Cursors, cursors_alloc, cursors_free, gallop, reach, row, seek, slot_ranges, tf_at,
)
from datafusion_fts.kernels.topk_heap cimport heap_push, heap_results, java_key

from datafusion_fts.kernels.postings_codec import BAD_ROWS, DamagedPostings

cdef enum:
    # A row's state: in a scored slot's postings, in an excluded one's.
    MATCHED = 1
    EXCLUDED_ROW = 2


def accumulated_or_topk(
    words, block_words, block_bits, rows, tfs, blk_last, ords, post_offsets, block_offsets, norms, tids, kinds, weights,
    mults, double boost, int64_t k, int64_t row_lo, int64_t row_hi, int64_t base, included, bint use_include,
    deleted, double floor,
):
    """Top ``k`` rows among local rows [row_lo, row_hi) of the disjunction, best first, as
    row ids (local row + ``base``), among those scoring above ``floor``.

    Arguments as in pruned_or.pyx's ``pruned_or_topk`` (without block bounds). Returns
    (row ids, scores, postings_scored, 0 blocks skipped, postings of the slots' terms).
    """
    cdef Arrays held
    cdef Source src
    cdef Slots a
    cdef int64_t* out_rows
    cdef double* out_scores
    cdef Py_ssize_t n, t, j
    cdef int64_t* slots = NULL  # starts, ends, blk0s
    cdef int64_t* starts
    cdef int64_t* ends
    cdef int64_t* blk0s
    cdef int64_t* keys = NULL  # the heap's
    cdef double* acc = NULL  # each row's score
    cdef uint8_t* state = NULL  # each row's MATCHED / EXCLUDED_ROW
    cdef int64_t total = 0, scored = 0, start, end, blk0, cur, d, ic = 0, dc = 0
    cdef Py_ssize_t size = 0
    cdef double w, m, freq, score
    cdef bint excluded
    cdef Cursors cs
    held.n = 0
    cs.row_block = NULL
    try:
        src = source_of(&held, words, block_words, block_bits, rows, tfs, blk_last, ords)
        a = slots_of(&held, post_offsets, block_offsets, norms, tids, kinds, weights, mults, included, deleted)
        n = a.n
        slots = <int64_t*>malloc(3 * max(n, 1) * sizeof(int64_t))
        acc = <double*>calloc(max(row_hi - row_lo, 1), sizeof(double))
        state = <uint8_t*>calloc(max(row_hi - row_lo, 1), 1)
        if slots == NULL or acc == NULL or state == NULL or not cursors_alloc(&cs, 1):  # one list decoded at a time
            raise MemoryError()
        starts, ends, blk0s = slots, slots + n, slots + 2 * n
        slot_ranges(a.post_offsets, a.block_offsets, a.tids, n, starts, ends, blk0s)
        with nogil:
            for t in range(n):
                start, end, blk0 = starts[t], ends[t], blk0s[t]
                total += end - start
                if start == end:
                    continue
                cs.row_block[0] = -1  # (nothing of this list decoded yet)
                cs.tf_block[0] = -1
                reach(&src, &cs, 0, start, end, blk0, start, row_lo)
                cur = seek(&src, &cs, 0, start, end, blk0, start, row_lo, True).cur
                w, m, excluded = a.weights[t], a.mults[t], a.kinds[t] == EXCLUDED
                while cur < end:
                    if cur >= cs.decoded[0]:
                        reach(&src, &cs, 0, start, end, blk0, cur, PAST_ROWS)
                    d = row(&cs, 0, start, cur)
                    if d >= row_hi:
                        break
                    j = d - row_lo
                    if excluded:
                        state[j] |= EXCLUDED_ROW
                    else:
                        freq = tf_at(&src, &cs, 0, start, end, blk0, cur)
                        acc[j] = acc[j] + ((w * freq) / (freq + a.norms[d])) * m
                        state[j] |= MATCHED
                        scored += 1
                    cur += 1
        if cs.damaged:
            raise DamagedPostings(BAD_ROWS)
        k = min(k, scored)
        out_rows_a = np.empty(k, dtype=np.int64)
        out_scores_a = np.empty(k, dtype=np.float64)
        out_rows, out_scores = i64_out(&held, out_rows_a), f64_out(&held, out_scores_a)
        keys = <int64_t*>malloc(max(k, 1) * sizeof(int64_t))
        if keys == NULL:
            raise MemoryError()
        with nogil:
            for j in range(row_hi - row_lo):
                if state[j] != MATCHED:
                    continue
                d = row_lo + j
                if use_include:
                    ic = gallop(a.included, ic, a.n_inc, d)
                    if ic >= a.n_inc:
                        break
                    if a.included[ic] != d:
                        continue
                if a.n_del:
                    dc = gallop(a.deleted, dc, a.n_del, d)
                    if dc < a.n_del and a.deleted[dc] == d:
                        continue
                score = acc[j] * boost
                if score > floor:
                    size = heap_push(keys, out_rows, out_scores, size, k, java_key(score), d, score)
            heap_results(keys, out_rows, out_scores, size, base)
    finally:
        cursors_free(&cs)
        free(slots)
        free(keys)
        free(acc)
        free(state)
        release(&held)
    return out_rows_a[:size], out_scores_a[:size], scored, 0, total
