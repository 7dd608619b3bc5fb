"""Top-k of a disjunction of many terms over one segment part, a term at a time: each
scored slot's postings are added into one score per row of the part, then the best k rows
are taken.

Why beside MaxScore (:mod:`.pruned_or_kernel`): that kernel looks at every slot for every
candidate row, so its cost grows with rows times slots (an OR of 10,000 terms over 20,000
rows took 4 s); accumulating costs the slots' postings plus the part's rows. It gives up
skipping, which pays with a few terms and a large part, so :func:`.term_topk.term_topk`
uses it only past ``ACCUMULATE_SLOTS`` scored slots.

Scores are the conjunction kernel's formula (:mod:`.conjunction_kernel`) with the same
operations in the same order: a row's sum starts at 0.0 and adds ``((w_t * tf) / (tf +
norm)) * m_t`` for each present slot in slot order (slot t's postings are all added before
slot t+1's), times ``boost``; so results are bit-identical to the other kernels'. A row of
an EXCLUDED slot, a deleted row or one outside the prefilter is not ranked; nor, as there,
one not scoring above ``floor``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .posting_cursor import PAST_ROWS, cursors, damaged, gallop, reach, row, seek, slot_ranges, tf_at
from .pruned_or_kernel import EXCLUDED
from .topk_heap import heap_push, heap_results, java_key

# Scored slots from which a disjunction is accumulated rather than walked by MaxScore.
# Top 10 on 200,000 rows of 10 words (a Zipf vocabulary of 20,000), MaxScore against
# accumulating: 32 rare terms 1.0 against 2.0 ms, the 32 most frequent 62 against 54 ms;
# 64 terms 1.1 against 1.6 ms and 126 against 65 ms; 1,024 terms 253 against 15 ms and
# 2.6 s against 0.10 s; 4,096 terms 5.5 s against 77 ms and 13.7 s against 0.15 s.
ACCUMULATE_SLOTS = 64

_MATCHED = np.uint8(1)
_EXCLUDED = np.uint8(2)


@njit(cache=True, nogil=True)
def accumulated_or_topk(
    words, block_words, block_bits, rows, tfs, blk_last, post_offsets, block_offsets, norms, tids,
    kinds, weights, mults, boost, k, row_lo, row_hi, base, include, use_include, deleted, floor,
):
    """Top ``k`` rows among local rows [row_lo, row_hi) of the disjunction, best first, as
    row ids (local row + ``base``), among those scoring above ``floor``.

    Arguments as in :func:`.pruned_or_kernel.pruned_or_topk` (without block bounds).
    Returns (row ids, scores, postings_scored, 0 blocks skipped, postings of the slots' terms).
    """
    src = (words, block_words, block_bits, rows, tfs, blk_last)
    starts, ends, blk0s = slot_ranges(post_offsets, block_offsets, tids)
    cs = cursors(1)  # one list decoded at a time
    acc = np.zeros(row_hi - row_lo, dtype=np.float64)
    state = np.zeros(row_hi - row_lo, dtype=np.uint8)
    total = scored = 0
    for t in range(kinds.shape[0]):
        start, end, blk0 = starts[t], ends[t], blk0s[t]
        total += end - start
        if start == end:
            continue
        cs[2][0] = -1  # (nothing of this list decoded yet)
        cs[3][0] = -1
        reach(src, cs, 0, start, end, blk0, start, row_lo)
        cur, _ = seek(src, cs, 0, start, end, blk0, start, row_lo, True)
        w, m, excluded = weights[t], mults[t], kinds[t] == EXCLUDED
        while cur < end:
            if cur >= cs[5][0]:
                reach(src, cs, 0, start, end, blk0, cur, PAST_ROWS)
            d = row(cs, 0, start, cur)
            if d >= row_hi:
                break
            j = d - row_lo
            if excluded:
                state[j] |= _EXCLUDED
            else:
                freq = tf_at(src, cs, 0, start, end, blk0, cur)
                acc[j] = acc[j] + ((w * freq) / (freq + norms[d])) * m
                state[j] |= _MATCHED
                scored += 1
            cur += 1
    damaged(cs)
    k = min(k, scored)
    keys = np.empty(k, dtype=np.int64)
    out_rows = np.empty(k, dtype=np.int64)
    out_scores = np.empty(k, dtype=np.float64)
    size = 0
    n_inc, n_del = include.shape[0], deleted.shape[0]
    ic = dc = 0
    for j in range(row_hi - row_lo):
        if state[j] != _MATCHED:
            continue
        d = row_lo + j
        if use_include:
            ic = gallop(include, ic, n_inc, d)
            if ic >= n_inc:
                break
            if include[ic] != d:
                continue
        if n_del:
            dc = gallop(deleted, dc, n_del, d)
            if dc < n_del and deleted[dc] == d:
                continue
        score = acc[j] * boost
        if score > floor:
            size = heap_push(keys, out_rows, out_scores, size, java_key(score), d, score)
    out_rows, out_scores = heap_results(keys, out_rows, out_scores, size, base)
    return out_rows, out_scores, scored, 0, total
