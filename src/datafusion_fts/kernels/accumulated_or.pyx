"""Top-k of a disjunction of many terms over one segment part, a term at a time: each
scored slot's postings are added into one score per row of the part, then the best k rows
are taken.

Why beside MaxScore (pruned_or.pyx): that kernel looks at every slot for every candidate
row, so its cost grows with rows times slots (an OR of 10,000 terms over 20,000 rows took
4 s); accumulating costs the slots' postings plus the part's rows. It gives up skipping,
which pays with a few terms and a large part, so operators/term_topk.py uses it only past
``ACCUMULATE_SLOTS`` scored slots.

Scores are the conjunction kernel's formula (conjunction.pyx) with the same operations in
the same order: a row's sum starts at 0.0 and adds ``((w_t * tf) / (tf + norm)) * m_t``
for each present slot in slot order (slot t's postings are all added before slot t+1's),
times ``boost``; so results are bit-identical to the other kernels'. A row of an EXCLUDED
slot, a deleted row or one outside the prefilter is not ranked; nor, as there, one not
scoring above ``floor``.
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint32_t

from datafusion_fts.kernels.conjunction cimport EXCLUDED
from datafusion_fts.kernels.postings_codec cimport Source, make_source
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
    const uint32_t[::1] words, const int64_t[::1] block_words, const uint8_t[::1] block_bits,
    const uint32_t[::1] rows, const uint32_t[::1] tfs, const uint32_t[::1] blk_last,
    const int64_t[::1] post_offsets, const int64_t[::1] block_offsets, const double[::1] norms,
    const int64_t[::1] tids, const int64_t[::1] kinds, const double[::1] weights, const double[::1] mults,
    double boost, int64_t k, int64_t row_lo, int64_t row_hi, int64_t base, const int64_t[::1] included,
    bint use_include, const int64_t[::1] deleted, double floor,
):
    """Top ``k`` rows among local rows [row_lo, row_hi) of the disjunction, best first, as
    row ids (local row + ``base``), among those scoring above ``floor``.

    Arguments as in pruned_or.pyx's ``pruned_or_topk`` (without block bounds). Returns
    (row ids, scores, postings_scored, 0 blocks skipped, postings of the slots' terms).
    """
    cdef Source src = make_source(words, block_words, block_bits, rows, tfs, blk_last)
    cdef Py_ssize_t n = kinds.shape[0], t, j
    slots_a = np.zeros((3, max(n, 1)), dtype=np.int64)
    cdef int64_t[:, ::1] slots = slots_a
    cdef int64_t* starts = &slots[0, 0]
    cdef int64_t* ends = &slots[1, 0]
    cdef int64_t* blk0s = &slots[2, 0]
    acc_a = np.zeros(row_hi - row_lo, dtype=np.float64)
    state_a = np.zeros(row_hi - row_lo, dtype=np.uint8)
    cdef double[::1] acc = acc_a
    cdef uint8_t[::1] state = state_a
    cdef int64_t total = 0, scored = 0, start, end, blk0, cur, d, ic = 0, dc = 0
    cdef int64_t n_inc = included.shape[0], n_del = deleted.shape[0]
    cdef Py_ssize_t size = 0
    cdef double w, m, freq, score
    cdef bint excluded
    cdef Cursors cs
    slot_ranges(&post_offsets[0], &block_offsets[0], &tids[0], n, starts, ends, blk0s)
    if not cursors_alloc(&cs, 1):  # one list decoded at a time
        raise MemoryError()
    try:
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
                w, m, excluded = weights[t], mults[t], kinds[t] == EXCLUDED
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
                        acc[j] = acc[j] + ((w * freq) / (freq + norms[d])) * m
                        state[j] |= MATCHED
                        scored += 1
                    cur += 1
        if cs.damaged:
            raise DamagedPostings(BAD_ROWS)
    finally:
        cursors_free(&cs)
    k = min(k, scored)
    keys_a = np.empty(k, dtype=np.int64)
    out_rows_a = np.empty(k, dtype=np.int64)
    out_scores_a = np.empty(k, dtype=np.float64)
    cdef int64_t[::1] keys = keys_a, out_rows = out_rows_a
    cdef double[::1] out_scores = out_scores_a
    with nogil:
        for j in range(row_hi - row_lo):
            if state[j] != MATCHED:
                continue
            d = row_lo + j
            if use_include:
                ic = gallop(&included[0], ic, n_inc, d)
                if ic >= n_inc:
                    break
                if included[ic] != d:
                    continue
            if n_del:
                dc = gallop(&deleted[0], dc, n_del, d)
                if dc < n_del and deleted[dc] == d:
                    continue
            score = acc[j] * boost
            if score > floor:
                size = heap_push(&keys[0], &out_rows[0], &out_scores[0], size, k, java_key(score), d, score)
        heap_results(&keys[0], &out_rows[0], &out_scores[0], size, base)
    return out_rows_a[:size], out_scores_a[:size], scored, 0, total
