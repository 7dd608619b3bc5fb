"""Top-k of a disjunction of terms over one segment with block-max pruning (MaxScore).

Documents are visited in row order (DAAT). Terms are split by their score upper bounds:
those whose bounds sum to at most the current k-th score (the threshold) cannot lift a
row into the top k alone, so only rows of the other ("essential") terms are candidates,
and the rest are probed at those rows. Per-block bounds (from each block's max tf and
min document length) skip whole blocks whose rows cannot beat the threshold.

Exactness: a row is skipped only if its upper bound is <= the threshold. Rows are visited
in ascending row id, so a skipped row tying the k-th score has a larger row id than every
kept row and ranks below them (DESIGN §5.2). Bounds carry a relative margin far above
float64 rounding, and kept rows are scored with the canonical operations (the same
``(w * tf) / (tf + norm)`` terms, summed in query order), so results are bit-identical
to exhaustive scoring.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _worse(s1: float, r1: int, s2: float, r2: int) -> bool:
    """(s1, r1) ranks below (s2, r2) (finite, non-NaN scores)."""
    if s1 != s2:
        return s1 < s2
    return r1 > r2


@njit(cache=True, nogil=True)
def _push(heap_s, heap_r, size, k, s, r):
    """Insert into a k-heap whose root is the worst entry; return the new size."""
    if size < k:
        c = size
        heap_s[c] = s
        heap_r[c] = r
        size += 1
        while c > 0:
            p = (c - 1) // 2
            if _worse(heap_s[c], heap_r[c], heap_s[p], heap_r[p]):
                heap_s[c], heap_s[p] = heap_s[p], heap_s[c]
                heap_r[c], heap_r[p] = heap_r[p], heap_r[c]
                c = p
            else:
                break
        return size
    if not _worse(heap_s[0], heap_r[0], s, r):
        return size
    heap_s[0] = s
    heap_r[0] = r
    c = 0
    while True:
        lft = 2 * c + 1
        if lft >= size:
            break
        w = lft
        if lft + 1 < size and _worse(heap_s[lft + 1], heap_r[lft + 1], heap_s[lft], heap_r[lft]):
            w = lft + 1
        if _worse(heap_s[w], heap_r[w], heap_s[c], heap_r[c]):
            heap_s[c], heap_s[w] = heap_s[w], heap_s[c]
            heap_r[c], heap_r[w] = heap_r[w], heap_r[c]
            c = w
        else:
            break
    return size


@njit(cache=True, nogil=True)
def _sorted_heap(heap_s, heap_r, size):
    """The heap's entries best first."""
    idx = np.arange(size)
    for a in range(1, size):
        x = idx[a]
        b = a - 1
        while b >= 0 and _worse(heap_s[idx[b]], heap_r[idx[b]], heap_s[x], heap_r[x]):
            idx[b + 1] = idx[b]
            b -= 1
        idx[b + 1] = x
    return heap_r[idx].copy(), heap_s[idx].copy()


@njit(cache=True, nogil=True)
def _single_term_topk(
    rows, tfs, start, end, blk0, blk_ub, blk_last, norms, weight, boost, k, allowed, row_lo, row_hi
):
    """One term: block at a time, skipping blocks whose bound cannot beat the threshold."""
    heap_s = np.empty(k, dtype=np.float64)
    heap_r = np.empty(k, dtype=np.int64)
    size = 0
    theta = -np.inf
    scored = 0
    skipped = 0
    use_mask = allowed.shape[0] > 0
    n_blocks = (end - start + 127) // 128
    for j in range(n_blocks):
        a = start + j * 128
        b = min(a + 128, end)
        if blk_last[blk0 + j] < row_lo or rows[a] >= row_hi:
            continue
        if size == k and blk_ub[blk0 + j] * boost <= theta:
            skipped += 1
            continue
        for i in range(a, b):
            d = rows[i]
            if d < row_lo or d >= row_hi or (use_mask and allowed[d] == 0):
                continue
            tf = np.float64(tfs[i])
            score = (weight * tf) / (tf + norms[d])
            if boost != 1.0:
                score = score * boost
            scored += 1
            if size < k or score > theta:
                size = _push(heap_s, heap_r, size, k, score, d)
                if size == k:
                    theta = heap_s[0]
    out_r, out_s = _sorted_heap(heap_s, heap_r, size)
    return out_r, out_s, scored, skipped


@njit(cache=True, nogil=True)
def pruned_or_topk(
    rows, tfs, term_start, term_end, blk_start, blk_ub, blk_last, norms, weights, boost, k, allowed, row_lo, row_hi
):
    """Top-k rows in [row_lo, row_hi) of ``boost * sum_t score_t`` over term slots t.

    Slot t's postings are ``rows/tfs[term_start[t]:term_end[t]]`` (ascending local rows)
    with blocks ``blk_start[t]..`` of 128 postings (``blk_ub`` bound, ``blk_last`` last
    row). ``allowed`` (uint8 per local row, or empty) masks deleted / excluded rows.
    Returns (rows, scores, postings_scored, blocks_skipped), best first.
    """
    n = term_start.shape[0]
    if n == 1:
        return _single_term_topk(
            rows, tfs, term_start[0], term_end[0], blk_start[0], blk_ub, blk_last, norms, weights[0],
            boost, k, allowed, row_lo, row_hi,
        )
    cur = term_start.copy()  # posting cursor per slot
    blk = blk_start.copy()  # block cursor per slot
    for t in range(n):  # start at row_lo
        a = cur[t]
        b = term_end[t]
        lo, hi = a, b
        while lo < hi:
            mid = (lo + hi) // 2
            if rows[mid] < row_lo:
                lo = mid + 1
            else:
                hi = mid
        cur[t] = lo
        blk[t] = blk_start[t] + (lo - term_start[t]) // 128
    term_ub = np.zeros(n)
    for t in range(n):
        nb = (term_end[t] - term_start[t] + 127) // 128
        for j in range(blk_start[t], blk_start[t] + nb):
            if blk_ub[j] > term_ub[t]:
                term_ub[t] = blk_ub[j]
    order = np.argsort(term_ub)  # ascending bounds: non-essential prefix first
    prefix = np.zeros(n + 1)
    for i in range(n):
        prefix[i + 1] = prefix[i] + term_ub[order[i]]
    essential = np.ones(n, dtype=np.uint8)
    heap_s = np.empty(k, dtype=np.float64)
    heap_r = np.empty(k, dtype=np.int64)
    size = 0
    theta = -np.inf
    n_ess_from = 0  # order[n_ess_from:] are essential
    scored = 0
    skipped_blocks = 0
    use_mask = allowed.shape[0] > 0
    while True:
        # Candidate: the smallest current row among essential slots.
        d = row_hi
        for i in range(n_ess_from, n):
            t = order[i]
            if cur[t] < term_end[t] and rows[cur[t]] < d:
                d = rows[cur[t]]
        if d >= row_hi:
            break
        # Advance every slot's block cursor to the block holding row d (or after it).
        ub = prefix[n_ess_from]
        skip_to = row_hi
        for i in range(n_ess_from, n):
            t = order[i]
            nb_end = blk_start[t] + (term_end[t] - term_start[t] + 127) // 128
            while blk[t] < nb_end and blk_last[blk[t]] < d:
                blk[t] += 1
            if blk[t] < nb_end:
                ub += blk_ub[blk[t]]
                if blk_last[blk[t]] < skip_to:
                    skip_to = blk_last[blk[t]]
        if size == k and ub * boost <= theta:
            # No row up to skip_to can beat the threshold: jump essential cursors past it.
            for i in range(n_ess_from, n):
                t = order[i]
                lo, hi = cur[t], term_end[t]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if rows[mid] <= skip_to:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo > cur[t]:
                    skipped_blocks += (lo - cur[t] + 127) // 128
                cur[t] = lo
            continue
        if use_mask and allowed[d] == 0:
            for i in range(n_ess_from, n):
                t = order[i]
                if cur[t] < term_end[t] and rows[cur[t]] == d:
                    cur[t] += 1
            continue
        # Exact score, canonical order over slots.
        acc = 0.0
        first = True
        norm = norms[d]
        for t in range(n):
            found = -1
            if cur[t] < term_end[t] and rows[cur[t]] == d:
                found = cur[t]
            elif essential[t] == 0:
                lo, hi = cur[t], term_end[t]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if rows[mid] < d:
                        lo = mid + 1
                    else:
                        hi = mid
                cur[t] = lo
                if lo < term_end[t] and rows[lo] == d:
                    found = lo
            if found >= 0:
                tf = np.float64(tfs[found])
                s = (weights[t] * tf) / (tf + norm)
                if first:
                    acc = s
                    first = False
                else:
                    acc = acc + s
                scored += 1
        if not first:
            score = acc * boost if boost != 1.0 else acc
            size = _push(heap_s, heap_r, size, k, score, d)
            if size == k:
                theta = heap_s[0]
                while n_ess_from < n and prefix[n_ess_from + 1] * boost <= theta:
                    essential[order[n_ess_from]] = 0
                    n_ess_from += 1
        for i in range(n_ess_from, n):
            t = order[i]
            if cur[t] < term_end[t] and rows[cur[t]] == d:
                cur[t] += 1
    out_r, out_s = _sorted_heap(heap_s, heap_r, size)
    return out_r, out_s, scored, skipped_blocks
