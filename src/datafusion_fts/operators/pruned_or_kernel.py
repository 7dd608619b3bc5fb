"""Top-k of a disjunction of terms over one segment part, with block-max pruning (MaxScore).

Rows are visited in row order (DAAT). A row's score is the conjunction kernel's formula
(:mod:`.conjunction_kernel`): ``acc = 0.0``, plus ``((w_t * tf) / (tf + norm)) * m_t``
for each present slot in query order, times ``boost``. That is the evaluator's order for
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

from __future__ import annotations

import numpy as np
from numba import njit

from ..kernels.invert import BLOCK_SIZE
from .posting_cursor import (
    PAST_ROWS, cursors, damaged, gallop, no_refcounts, reach, row, seek, slot_ranges, start_cursors, tf_at,
)
from .topk_heap import heap_push, heap_results, java_key

EXCLUDED = 2  # as in .conjunction_kernel; any other kind is a scored (optional) slot


@no_refcounts
def _excluded(src, cs, kinds, starts, ends, blk0s, cur, d, skip):
    """(Row d is in an EXCLUDED slot, blocks skipped moving those cursors to d). Asked only
    for a row that would enter the top k: an exclusion list is sought per row asked (a
    call, ~100 ns), so asking every row costs more than scoring it."""
    skipped = 0
    for t in range(kinds.shape[0]):
        if kinds[t] == EXCLUDED:
            q, s = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
            cur[t] = q
            skipped += s
            if q < ends[t] and row(cs, t, starts[t], q) == d:
                return True, skipped
    return False, skipped


@njit(cache=True, nogil=True)
def pruned_or_topk(
    words, block_words, block_bits, rows, tfs, blk_last, post_offsets, block_offsets, blk_bound, norms, tids,
    kinds, weights, mults, boost, k, row_lo, row_hi, base, include, use_include, deleted, prune, floor,
):
    """Top ``k`` rows among local rows [row_lo, row_hi) of the disjunction, best first, as
    row ids (local row + ``base``), among those scoring above ``floor`` (-inf: all; only
    with ``prune``).

    Arguments as in :func:`.conjunction_kernel.conjunction_topk`; ``blk_bound`` holds every
    block's bound factor, so slot t's block j is bounded by ``weights[t] * mults[t] *
    blk_bound[j]``. ``prune`` requires ``mults[t] * boost > 0`` for every scored slot.
    Returns (row ids, scores, postings_scored, blocks_skipped, postings of the slots' terms).
    """
    src = (words, block_words, block_bits, rows, tfs, blk_last)
    n = kinds.shape[0]
    starts, ends, cur = slot_ranges(post_offsets, block_offsets, tids)
    blk0s = cur.copy()
    cs = cursors(n)
    start_cursors(src, cs, starts, ends, blk0s, row_lo)
    total = 0
    n_scored = 0
    single = -1
    upper = 0  # most rows that can match
    for t in range(n):
        total += ends[t] - starts[t]
        if kinds[t] != EXCLUDED:
            upper += ends[t] - starts[t]
            n_scored += 1
            single = t
        cur[t], _ = seek(src, cs, t, starts[t], ends[t], blk0s[t], starts[t], row_lo, True)
    excludes = n_scored < n
    k = min(k, upper)
    keys = np.empty(k, dtype=np.int64)
    out_rows = np.empty(k, dtype=np.int64)
    out_scores = np.empty(k, dtype=np.float64)
    size = scored = skipped = 0
    if k == 0:
        pass
    elif n_scored == 1:
        size, scored, skipped = _single(
            src, cs, blk_bound, norms, kinds, starts, ends, blk0s, weights, mults,
            boost, row_hi, include, use_include, deleted, prune, excludes, cur, single, keys, out_rows, out_scores,
            floor,
        )
    else:
        order, prefix, bound_w = _by_bound(blk_bound, kinds, starts, ends, blk0s, weights, mults, boost, n_scored)
        size, scored, skipped = _maxscore(
            src, cs, blk_bound, norms, kinds, starts, ends, blk0s, weights, mults,
            boost, row_hi, include, use_include, deleted, prune, excludes, cur, keys, out_rows, out_scores,
            floor, order, prefix, bound_w, np.ones(n, dtype=np.uint8),
        )
    damaged(cs)
    out_rows, out_scores = heap_results(keys, out_rows, out_scores, size, base)
    return out_rows, out_scores, scored, skipped, total


@no_refcounts
def _single(
    src, cs, blk_bound, norms, kinds, starts, ends, blk0s, weights, mults,
    boost, row_hi, include, use_include, deleted, prune, excludes, cur, t, keys, out_rows, out_scores, floor,
):
    """One scored slot: block at a time, skipping blocks whose bound cannot beat the threshold."""
    k = keys.shape[0]
    size = 0
    scored = 0
    skipped = 0
    theta = floor  # then the k-th score held, once k rows are (never below floor)
    n_inc = include.shape[0]
    n_del = deleted.shape[0]
    ic = 0
    dc = 0
    start, end, blk0 = starts[t], ends[t], blk0s[t]
    w, m = weights[t], mults[t]
    bound_w = w * m * boost
    plain = not use_include and not n_del and not excludes  # (every row of the list is scored)
    i = cur[t]
    while i < end:
        blk = blk0 + (i - start) // BLOCK_SIZE
        block_end = min(start + (blk - blk0 + 1) * BLOCK_SIZE, end)
        if prune and bound_w * blk_bound[blk] <= theta:
            skipped += 1
            i = block_end
            continue
        if cs[2][t] != blk or cs[5][t] < block_end:
            reach(src, cs, t, start, end, blk0, i, PAST_ROWS)
        tf_at(src, cs, t, start, end, blk0, i)  # (the block's frequencies: its rows are all scored)
        rows, tfs = cs[0][t], cs[1][t]
        first = start + (blk - blk0) * BLOCK_SIZE
        if plain and np.int64(src[5][blk]) < row_hi:
            # Every row of the block is scored: one tight loop (most of a frequent term).
            for j in range(i - first, block_end - first):
                d = np.int64(rows[np.uint64(j)])
                freq = np.float64(tfs[np.uint64(j)])
                score = (0.0 + ((w * freq) / (freq + norms[d])) * m) * boost
                if not prune or score > theta:
                    size = heap_push(keys, out_rows, out_scores, size, java_key(score), d, score)
                    if prune and size == k:
                        theta = out_scores[0]
            scored += block_end - i
            i = block_end
            continue
        while i < block_end:
            d = np.int64(rows[np.uint64(i - first)])
            if d >= row_hi:
                return size, scored, skipped
            if use_include:
                ic = gallop(include, ic, n_inc, d)
                if ic >= n_inc:
                    return size, scored, skipped
                if include[ic] != d:
                    i, s = seek(src, cs, t, start, end, blk0, i, include[ic], True)
                    skipped += s
                    break  # re-enter the block loop at the new position
            if n_del:
                dc = gallop(deleted, dc, n_del, d)
                if dc < n_del and deleted[dc] == d:
                    i += 1
                    continue
            i += 1
            freq = np.float64(tfs[np.uint64(i - 1 - first)])
            score = (0.0 + ((w * freq) / (freq + norms[d])) * m) * boost
            scored += 1
            if prune and not score > theta:
                continue
            if excludes:
                out, s = _excluded(src, cs, kinds, starts, ends, blk0s, cur, d, prune)
                skipped += s
                if out:
                    continue
            size = heap_push(keys, out_rows, out_scores, size, java_key(score), d, score)
            if prune and size == k:
                theta = out_scores[0]
    return size, scored, skipped


@njit(cache=True, nogil=True)
def _by_bound(blk_bound, kinds, starts, ends, blk0s, weights, mults, boost, n_scored):
    """The scored slots by ascending upper bound (a prefix of them is non-essential), the
    running sums of their bounds, and each slot's bound weight ``w_t * m_t * boost``."""
    n = kinds.shape[0]
    bound_w = np.zeros(n)
    term_ub = np.zeros(n)
    for t in range(n):
        if kinds[t] == EXCLUDED:
            continue
        bound_w[t] = weights[t] * mults[t] * boost
        nb = (ends[t] - starts[t] + BLOCK_SIZE - 1) // BLOCK_SIZE
        best = 0.0
        for j in range(blk0s[t], blk0s[t] + nb):
            if blk_bound[j] > best:
                best = blk_bound[j]
        term_ub[t] = bound_w[t] * best
    order = np.empty(n_scored, dtype=np.int64)
    by_bound = np.argsort(term_ub)
    i = 0
    for t in by_bound:
        if kinds[t] != EXCLUDED:
            order[i] = t
            i += 1
    prefix = np.zeros(n_scored + 1)
    for i in range(n_scored):
        prefix[i + 1] = prefix[i] + term_ub[order[i]]
    return order, prefix, bound_w


@no_refcounts
def _maxscore(
    src, cs, blk_bound, norms, kinds, starts, ends, blk0s, weights, mults,
    boost, row_hi, include, use_include, deleted, prune, excludes, cur, keys, out_rows, out_scores, floor,
    order, prefix, bound_w, essential,
):
    """Several scored slots: MaxScore over the essential slots (``order`` and ``prefix``
    from :func:`_by_bound`; ``essential`` all ones), block bounds per candidate."""
    blk_last = src[5]
    n = kinds.shape[0]
    k = keys.shape[0]
    n_scored = order.shape[0]
    ess_from = 0  # order[ess_from:] are essential
    size = 0
    theta = floor  # then the k-th score held, once k rows are (never below floor)
    while prune and ess_from < n_scored and prefix[ess_from + 1] <= theta:
        essential[order[ess_from]] = 0
        ess_from += 1
    scored = 0
    skipped = 0
    n_inc = include.shape[0]
    n_del = deleted.shape[0]
    ic = 0
    dc = 0
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
        if prune and theta > -np.inf:
            # Bound every row up to the end of the essential slots' current blocks.
            ub = prefix[ess_from]
            skip_to = row_hi
            for i in range(ess_from, n_scored):
                t = order[i]
                if cur[t] < ends[t]:
                    blk = blk0s[t] + (cur[t] - starts[t]) // BLOCK_SIZE
                    ub += bound_w[t] * blk_bound[blk]
                    if blk_last[blk] < skip_to:
                        skip_to = np.int64(blk_last[blk])
            if ub <= theta:
                for i in range(ess_from, n_scored):
                    t = order[i]
                    cur[t], s = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], skip_to + 1, True)
                    skipped += s
                continue
        target = d + 1  # where the essential cursors at d go next
        candidate = True
        if use_include:
            ic = gallop(include, ic, n_inc, d)
            if ic >= n_inc:
                break
            if include[ic] != d:
                target = include[ic]
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
                    cur[t], _ = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, True)
                q = cur[t]
                if q < ends[t] and row(cs, t, starts[t], q) == d:
                    freq = tf_at(src, cs, t, starts[t], ends[t], blk0s[t], q)
                    acc = acc + ((weights[t] * freq) / (freq + norm)) * mults[t]
                    scored += 1
            score = acc * boost
            if not prune or score > theta:
                out = False
                if excludes:
                    out, s = _excluded(src, cs, kinds, starts, ends, blk0s, cur, d, prune)
                    skipped += s
                if not out:
                    size = heap_push(keys, out_rows, out_scores, size, java_key(score), d, score)
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
                    if cur[t] < ends[t] and cur[t] >= cs[5][t]:
                        reach(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], PAST_ROWS)
                else:
                    cur[t], s = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], target, True)
                    skipped += s
    return size, scored, skipped
