"""Top-k of a conjunction of terms over one segment part: required terms intersected by
leapfrogging, optional terms added where present, excluded terms, deleted rows and a
prefilter skipped the same way (document at a time, in row order).

Slots are given in the query's canonical order and a row's score is

    acc = 0.0;  acc = acc + ((w_t * tf) / (tf + norm)) * m_t   for each present slot t;
    score = acc * boost

which is the evaluator's order for ``Match(operator="and")`` (m_t = 1, boost = the
leaf's) and for a ``Boolean`` of one-term MUST then SHOULD clauses (m_t = each clause's
boost, boost = 1): multiplying by 1.0 is exact, so scores are bit-identical to the
general evaluator (:mod:`.evaluate`).

The shortest required list leads: its next row is the candidate, every other required
list seeks it (:func:`.posting_cursor.seek`, skipping whole blocks by their last row), and
a list landing past it makes that row the next target. When the second shortest is at
most ``STEP_BOTH_RATIO`` times as long, the two step through each other instead
(:func:`meet`): a seek per candidate would cost more than the few postings it passes
(2 medium terms: 133k instructions a query down to 72k). Only rows in every required
list are ever scored.

Pruning (``prune``: every scored slot's ``m_t * boost`` is positive): once k rows are
held, the score of a row every required list holds is bounded by its required terms'
scores plus each optional slot's ``w_t * m_t`` (``tf / (tf + norm) < 1``), times
``boost`` and a relative margin far above float64 rounding. A row whose bound does not
beat the k-th score cannot enter (a tie has a larger row id, so it ranks below:
docs/design.md, "Order, top-k and paging"), so no excluded list is sought for it: exclusions are
checked only for rows that may enter. (Testing before the required lists are sought would cost more
than it saves: the test reads the row's norm, a cache miss, and most candidates fail the
intersection.) The threshold may also come from earlier parts of the segment set (``floor``, see
:mod:`.pruned_or_kernel`): their rows rank first on ties, so only rows beating it enter.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..index.bm25 import BOUND_MARGIN
from ..index.postings_codec import rank
from ..kernels.invert import BLOCK_SIZE
from .posting_cursor import (
    IN_BLOCK, PAST_ROWS, advance, advance_call, cursors, damaged, gallop, no_refcounts, reach, row, seek, slot_ranges, start_cursors,
    tf_at,
)
from .topk_heap import NO_KEY, heap_push, heap_results, java_key

REQUIRED = 0
OPTIONAL = 1
EXCLUDED = 2
# The second required list steps with the first when at most this many times as long.
STEP_BOTH_RATIO = 8


@no_refcounts
def meet(src, cs, ta, a_start, a_end, a_stop, a_blk0, a_cur, tb, b_start, b_end, b_stop, b_blk0, b_cur, target, skip):
    """Move slots ``ta`` and ``tb``'s cursors to their first common row >= ``target`` by
    stepping through each other (the lists are read up to ``a_stop``/``b_stop``: a cursor
    there means no such row). Returns (cursor a, cursor b, blocks skipped unread). Not in
    line: it runs once per common row, and the conjunction's seeking loop stays small."""
    a_cur, s = advance(src, cs, ta, a_start, a_end, a_blk0, a_cur, target, skip)
    b_cur, t = advance(src, cs, tb, b_start, b_end, b_blk0, b_cur, target, skip)
    if a_cur >= a_stop or b_cur >= b_stop:
        return a_cur, b_cur, s + t
    # Each list read from its decoded rows: rows[cur - first posting of the block], up to
    # the end of what is decoded (stepping on decodes the rest of the block).
    a_rows, b_rows = cs[0][ta], cs[0][tb]
    a_first = a_cur - ((a_cur - a_start) & IN_BLOCK)
    b_first = b_cur - ((b_cur - b_start) & IN_BLOCK)
    # (each list's cursor stops at the first of: its rows decoded, its stop)
    a_lim, b_lim = min(cs[5][ta], a_stop), min(cs[5][tb], b_stop)
    while True:
        a = a_rows[np.uint64(a_cur - a_first)]
        b = b_rows[np.uint64(b_cur - b_first)]
        if a == b:
            break
        # (no branch on which is smaller: at random rows it would be mispredicted half the time)
        a_cur += np.int64(a < b)
        b_cur += np.int64(b < a)
        if a_cur >= a_lim:
            if a_cur >= a_stop:
                break
            reach(src, cs, ta, a_start, a_end, a_blk0, a_cur, PAST_ROWS)
            a_first, a_lim = a_cur - ((a_cur - a_start) & IN_BLOCK), min(cs[5][ta], a_stop)
        if b_cur >= b_lim:
            if b_cur >= b_stop:
                break
            reach(src, cs, tb, b_start, b_end, b_blk0, b_cur, PAST_ROWS)
            b_first, b_lim = b_cur - ((b_cur - b_start) & IN_BLOCK), min(cs[5][tb], b_stop)
    return a_cur, b_cur, s + t


@njit(cache=True, nogil=True)
def conjunction_topk(
    words, block_words, block_bits, rows, tfs, blk_last, post_offsets, block_offsets, norms, tids, kinds,
    weights, mults, boost, k, row_lo, row_hi, base, include, use_include, deleted, skip, prune, floor,
):
    """Top ``k`` rows among local rows [row_lo, row_hi) of the conjunction, best first, as
    row ids (local row + ``base``), among those scoring above ``floor`` (-inf: all; only
    with ``prune``).

    ``words, block_words, block_bits, rows, tfs, blk_last`` are the segment's postings in
    either layout (a source of :mod:`..index.postings_codec`),
    ``post_offsets/block_offsets`` its per-term offsets; slot t reads term ``tids[t]``
    (-1: absent from the segment) as ``kinds[t]`` (REQUIRED / OPTIONAL / EXCLUDED).
    ``include`` (ascending local rows, used when ``use_include``) must contain a row;
    ``deleted`` (ascending local rows) must not. ``skip``: pass blocks by their last row;
    ``prune``: pass candidates by their score bound (above). Returns (row ids, scores,
    postings_scored, blocks_skipped, postings of the slots' terms).
    """
    src = (words, block_words, block_bits, rows, tfs, blk_last)
    n = kinds.shape[0]
    starts, ends, blk0s = slot_ranges(post_offsets, block_offsets, tids)
    cs = cursors(n)
    start_cursors(src, cs, starts, ends, blk0s, row_lo)
    total = 0
    shortest = -1
    for t in range(n):
        total += ends[t] - starts[t]
        if kinds[t] == REQUIRED and (shortest < 0 or ends[t] - starts[t] < shortest):
            shortest = ends[t] - starts[t]
    k = min(k, max(shortest, 0))
    # The required slots, shortest list first (insertion sort: a handful of slots).
    order = np.empty(n, dtype=np.int64)
    n_req = 0
    for t in range(n):
        if kinds[t] == REQUIRED:
            j = n_req
            while j > 0 and ends[order[j - 1]] - starts[order[j - 1]] > ends[t] - starts[t]:
                order[j] = order[j - 1]
                j -= 1
            order[j] = t
            n_req += 1
    keys = np.empty(k, dtype=np.int64)
    out_rows = np.empty(k, dtype=np.int64)
    out_scores = np.empty(k, dtype=np.float64)
    # Two lists of like length step through each other (see the module), not past the
    # part's rows.
    lead, second = order[0], order[1] if n_req > 1 else order[0]
    step_both = n_req > 1 and ends[second] - starts[second] <= STEP_BOTH_RATIO * (ends[lead] - starts[lead])
    lead_stop, sec_stop = ends[lead], ends[second]
    if step_both and k > 0:  # (a list whose last row is below row_hi ends at its end)
        if row_hi <= blk_last[blk0s[lead] + (ends[lead] - starts[lead] - 1) // BLOCK_SIZE]:
            lead_stop = rank(src, starts[lead], lead_stop, blk0s[lead], row_hi)
        if row_hi <= blk_last[blk0s[second] + (ends[second] - starts[second] - 1) // BLOCK_SIZE]:
            sec_stop = rank(src, starts[second], sec_stop, blk0s[second], row_hi)
    size, scored, skipped = _intersect(
        src, cs, norms, kinds, weights, mults, boost, k, row_lo, row_hi, include, use_include, deleted, skip,
        prune, floor, starts, ends, blk0s, starts.copy(), order, n_req, step_both, lead_stop, sec_stop,
        keys, out_rows, out_scores,
    )
    damaged(cs)
    out_rows, out_scores = heap_results(keys, out_rows, out_scores, size, base)
    return out_rows, out_scores, scored, skipped, total


@no_refcounts
def _intersect(
    src, cs, norms, kinds, weights, mults, boost, k, row_lo, row_hi, include, use_include, deleted, skip,
    prune, floor, starts, ends, blk0s, cur, order, n_req, step_both, lead_stop, sec_stop, keys, out_rows, out_scores,
):
    """:func:`conjunction_topk`'s walk, over its slots' postings ``[starts[t], ends[t])``
    (cursors ``cur``, at their starts) with the required slots in ``order`` (shortest
    first; with ``step_both`` the first two step through each other, up to ``lead_stop``/
    ``sec_stop``) and the top-k heap's arrays. Returns (heap size, postings scored, blocks
    skipped)."""
    n = kinds.shape[0]
    size = 0
    scored = 0
    skipped = 0
    n_inc = include.shape[0]
    n_del = deleted.shape[0]
    ic = 0
    dc = 0
    lead = order[0]
    floor_key = java_key(floor) if floor > -np.inf else NO_KEY  # what a row must beat
    n_excl = 0
    for t in range(n):
        if kinds[t] == EXCLUDED:
            n_excl += 1
    # The lead's and the second required list's cursors live in locals while the
    # intersection runs (most of a conjunction's time: few candidates match), and are
    # written back for scoring.
    lead_start, lead_end, lead_blk0, lead_cur = starts[lead], ends[lead], blk0s[lead], cur[lead]
    second = order[1] if n_req > 1 else lead
    sec_start, sec_end, sec_blk0, sec_cur = starts[second], ends[second], blk0s[second], cur[second]
    target = row_lo
    while k > 0:
        if step_both:
            lead_cur, sec_cur, s = meet(
                src, cs, lead, lead_start, lead_end, lead_stop, lead_blk0, lead_cur,
                second, sec_start, sec_end, sec_stop, sec_blk0, sec_cur, target, skip,
            )
            skipped += s
            if lead_cur >= lead_stop or sec_cur >= sec_stop:
                break
            d = row(cs, lead, lead_start, lead_cur)
        else:
            lead_cur, s = advance(src, cs, lead, lead_start, lead_end, lead_blk0, lead_cur, target, skip)
            skipped += s
            if lead_cur >= lead_end:
                break
            d = row(cs, lead, lead_start, lead_cur)
            if d >= row_hi:
                break
            if n_req > 1:
                sec_cur, s = advance(src, cs, second, sec_start, sec_end, sec_blk0, sec_cur, d, skip)
                skipped += s
                if sec_cur >= sec_end:
                    break
                r = row(cs, second, sec_start, sec_cur)
                if r != d:
                    target = r
                    continue
        # Every other required list (and the prefilter) must hold d; the first that
        # lands past it sets the next target.
        target = d
        for i in range(2, n_req):
            t = order[i]
            q, s = advance_call(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
            skipped += s
            cur[t] = q
            if q >= ends[t]:
                target = row_hi
                break
            r = row(cs, t, starts[t], q)
            if r != d:
                target = r
                break
        cur[second] = sec_cur  # (the lead's last: with one required list it is the second)
        cur[lead] = lead_cur
        if target == d and use_include:
            ic = gallop(include, ic, n_inc, d)
            target = include[ic] if ic < n_inc else row_hi
        if target != d:
            if target >= row_hi:
                break
            continue
        target = d + 1
        if n_del:
            dc = gallop(deleted, dc, n_del, d)
            if dc < n_del and deleted[dc] == d:
                continue
        if n_excl and prune and (size == k or floor_key != NO_KEY):
            norm = norms[d]
            bound = 0.0
            for t in range(n):
                if kinds[t] == REQUIRED:
                    freq = tf_at(src, cs, t, starts[t], ends[t], blk0s[t], cur[t])
                    bound += ((weights[t] * freq) / (freq + norm)) * mults[t]
                elif kinds[t] == OPTIONAL:
                    bound += weights[t] * mults[t]
            if java_key(bound * boost * BOUND_MARGIN) <= (keys[0] if size == k else floor_key):
                continue
        excluded = False
        for t in range(n):
            if kinds[t] == EXCLUDED:
                q, s = advance_call(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
                skipped += s
                cur[t] = q
                if q < ends[t] and row(cs, t, starts[t], q) == d:
                    excluded = True
                    break
        if excluded:
            continue
        norm = norms[d]
        acc = 0.0
        for t in range(n):
            kind = kinds[t]
            if kind == EXCLUDED:
                continue
            if kind == OPTIONAL:
                q, s = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
                cur[t] = q
                skipped += s
                if q >= ends[t] or row(cs, t, starts[t], q) != d:
                    continue
            freq = tf_at(src, cs, t, starts[t], ends[t], blk0s[t], cur[t])
            acc = acc + ((weights[t] * freq) / (freq + norm)) * mults[t]
            scored += 1
        score = acc * boost
        key = java_key(score)
        if key > floor_key:
            size = heap_push(keys, out_rows, out_scores, size, key, d, score)
    return size, scored, skipped
