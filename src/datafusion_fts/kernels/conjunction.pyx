"""Top-k of a conjunction of terms over one segment part: required terms intersected by
leapfrogging, optional terms added where present, excluded terms, deleted rows and a
prefilter skipped the same way (document at a time, in row order).

Slots are given in the query's canonical order and a row's score is

    acc = 0.0;  acc = acc + ((w_t * tf) / (tf + norm)) * m_t   for each present slot t;
    score = acc * boost

which is the evaluator's order for ``Match(operator="and")`` (m_t = 1, boost = the
leaf's) and for a ``Boolean`` of one-term MUST then SHOULD clauses (m_t = each clause's
boost, boost = 1): multiplying by 1.0 is exact, so scores are bit-identical to the
general evaluator (operators/evaluate.py).

The shortest required list leads: its next row is the candidate, every other required
list seeks it (posting_cursor.pxd's ``advance``, skipping whole blocks by their last
row), and a list landing past it makes that row the next target. When the second
shortest is at most ``STEP_BOTH_RATIO`` times as long, the two step through each other
instead (:func:`_meet`): a seek per candidate would cost more than the few postings it
passes (2 medium terms: 133k instructions a query down to 72k). Only rows in every
required list are ever scored.

Pruning (``prune``: every scored slot's ``m_t * boost`` is positive): once k rows are
held, the score of a row every required list holds is bounded by its required terms'
scores plus each optional slot's ``w_t * m_t`` (``tf / (tf + norm) < 1``), times
``boost`` and ``margin``, a relative margin far above float64 rounding. A row whose bound
does not beat the k-th score cannot enter (a tie has a larger row id, so it ranks below:
docs/design.md, "Order, top-k and paging"), so no excluded list is sought for it:
exclusions are checked only for rows that may enter. (Testing before the required lists
are sought would cost more than it saves: the test reads the row's norm, a cache miss,
and most candidates fail the intersection.) The threshold may also come from earlier
parts of the segment set (``floor``, see pruned_or.pyx): their rows rank first on ties,
so only rows beating it enter.
"""

import numpy as np

from libc.math cimport INFINITY
from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport free, malloc

from datafusion_fts.kernels.buffers cimport Arrays, f64_out, i64_out, release
from datafusion_fts.kernels.invert cimport BLOCK_SIZE
from datafusion_fts.kernels.postings_codec cimport Source, rank_in, source_of
from datafusion_fts.kernels.posting_cursor cimport (
    IN_BLOCK, PAST_ROWS, Cursors, Moved, advance, cursors_alloc, cursors_free, gallop, reach, row, seek,
    slot_ranges, start_cursors, tf_at,
)
from datafusion_fts.kernels.topk_heap cimport NO_KEY, heap_push, heap_results, java_key

from datafusion_fts.kernels.postings_codec import BAD_ROWS, DamagedPostings

cdef enum:
    # The second required list steps with the first when at most this many times as long.
    STEP_BOTH_RATIO = 8


def conjunction_topk(
    words, block_words, block_bits, rows, tfs, blk_last, ords, post_offsets, block_offsets, norms, tids, kinds, weights,
    mults, double boost, int64_t k, int64_t row_lo, int64_t row_hi, int64_t base, included, bint use_include,
    deleted, bint skip, bint prune, double floor, double margin,
):
    """Top ``k`` rows among local rows [row_lo, row_hi) of the conjunction, best first, as
    row ids (local row + ``base``), among those scoring above ``floor`` (-inf: all; only
    with ``prune``).

    ``words, block_words, block_bits, rows, tfs, blk_last, ords`` are the segment's
    postings in either layout (a source of postings_codec.pyx),
    ``post_offsets/block_offsets`` its per-term offsets (int64); slot t reads term
    ``tids[t]`` (int64; -1: absent from the segment) as ``kinds[t]`` (int64: REQUIRED /
    OPTIONAL / EXCLUDED) with weight ``weights[t]`` and multiplier ``mults[t]`` (float64);
    ``norms`` (float64) are the rows' length norms. ``included`` (int64, ascending local
    rows, used when ``use_include``) must contain a row; ``deleted`` (int64, ascending
    local rows) must not. ``skip``: pass blocks by their last row; ``prune``: pass
    candidates by their score bound (above, ``margin`` its relative slack). Returns (row
    ids, scores, postings_scored, blocks_skipped, postings of the slots' terms).
    """
    cdef Arrays held
    cdef Source src
    cdef Slots a
    cdef int64_t* out_rows
    cdef double* out_scores
    cdef Py_ssize_t n, t, j, n_req = 0
    cdef int64_t* slots = NULL
    cdef int64_t* keys = NULL
    cdef int64_t* starts
    cdef int64_t* ends
    cdef int64_t* blk0s
    cdef int64_t* cur
    cdef int64_t* order  # the required slots, shortest list first
    cdef int64_t total = 0, shortest = -1, lead, second, lead_stop = 0, sec_stop = 0
    cdef int64_t size = 0, scored = 0, skipped = 0
    cdef bint step_both = False, sound = True
    cdef Cursors cs
    held.n = 0
    cs.row_block = NULL
    try:
        src = source_of(&held, words, block_words, block_bits, rows, tfs, blk_last, ords)
        a = slots_of(&held, post_offsets, block_offsets, norms, tids, kinds, weights, mults, included, deleted)
        n = a.n
        slots = <int64_t*>malloc(5 * max(n, 1) * sizeof(int64_t))
        if slots == NULL or not cursors_alloc(&cs, n):
            raise MemoryError()
        starts, ends, blk0s, cur, order = slots, slots + n, slots + 2 * n, slots + 3 * n, slots + 4 * n
        slot_ranges(a.post_offsets, a.block_offsets, a.tids, n, starts, ends, blk0s)
        for t in range(n):
            cur[t] = starts[t]
            total += ends[t] - starts[t]
            if a.kinds[t] == REQUIRED and (shortest < 0 or ends[t] - starts[t] < shortest):
                shortest = ends[t] - starts[t]
        k = min(k, max(shortest, 0))
        out_rows_a = np.empty(k, dtype=np.int64)
        out_scores_a = np.empty(k, dtype=np.float64)
        out_rows, out_scores = i64_out(&held, out_rows_a), f64_out(&held, out_scores_a)
        keys = <int64_t*>malloc(max(k, 1) * sizeof(int64_t))
        if keys == NULL:
            raise MemoryError()
        with nogil:
            start_cursors(&src, &cs, starts, ends, blk0s, n, row_lo)
            for t in range(n):  # (insertion sort: a handful of slots)
                if a.kinds[t] == REQUIRED:
                    j = n_req
                    while j > 0 and ends[order[j - 1]] - starts[order[j - 1]] > ends[t] - starts[t]:
                        order[j] = order[j - 1]
                        j -= 1
                    order[j] = t
                    n_req += 1
            if k > 0:  # (then a required list is not empty)
                # Two lists of like length step through each other (see the module), not
                # past the part's rows.
                lead = order[0]
                second = order[1] if n_req > 1 else lead
                step_both = n_req > 1 and (
                    ends[second] - starts[second] <= STEP_BOTH_RATIO * (ends[lead] - starts[lead])
                )
                lead_stop, sec_stop = ends[lead], ends[second]
                if step_both:  # (a list whose last row is below row_hi ends at its end)
                    if row_hi <= src.blk_last[blk0s[lead] + (ends[lead] - starts[lead] - 1) // BLOCK_SIZE]:
                        lead_stop = rank_in(&src, starts[lead], lead_stop, blk0s[lead], row_hi, &sound)
                    if sound and (
                        row_hi <= src.blk_last[blk0s[second] + (ends[second] - starts[second] - 1) // BLOCK_SIZE]
                    ):
                        sec_stop = rank_in(&src, starts[second], sec_stop, blk0s[second], row_hi, &sound)
                if sound:
                    size = _intersect(
                        &src, &cs, a.norms, a.kinds, n, a.weights, a.mults, boost, k, row_lo, row_hi, a.included, a.n_inc,
                        use_include, a.deleted, a.n_del, skip, prune, floor, margin, starts, ends, blk0s, cur, order,
                        n_req, step_both, lead_stop, sec_stop, keys, out_rows, out_scores, &scored, &skipped,
                    )
            if sound and not cs.damaged:
                heap_results(keys, out_rows, out_scores, size, base)
        if not sound or cs.damaged:
            raise DamagedPostings(BAD_ROWS)
    finally:
        cursors_free(&cs)
        free(slots)
        free(keys)
        release(&held)
    return out_rows_a[:size], out_scores_a[:size], scored, skipped, total


cdef int64_t _meet(
    const Source* src, Cursors* cs, int64_t ta, int64_t a_start, int64_t a_end, int64_t a_stop, int64_t a_blk0,
    int64_t* a_at, int64_t tb, int64_t b_start, int64_t b_end, int64_t b_stop, int64_t b_blk0, int64_t* b_at,
    int64_t target, bint skip,
) noexcept nogil:
    """Move slots ``ta`` and ``tb``'s cursors (``a_at``, ``b_at``) to their first common
    row >= ``target`` by stepping through each other (the lists are read up to
    ``a_stop``/``b_stop``: a cursor there means no such row). Returns the blocks skipped
    unread. Not in line: it runs once per common row, and the conjunction's seeking loop
    stays small."""
    cdef Moved ma = advance(src, cs, ta, a_start, a_end, a_blk0, a_at[0], target, skip)
    cdef Moved mb = advance(src, cs, tb, b_start, b_end, b_blk0, b_at[0], target, skip)
    cdef int64_t a_cur = ma.cur, b_cur = mb.cur
    cdef const uint32_t* a_rows = cs.rows + ta * BLOCK_SIZE
    cdef const uint32_t* b_rows = cs.rows + tb * BLOCK_SIZE
    cdef int64_t a_first, b_first, a_lim, b_lim
    cdef uint32_t a, b
    if a_cur < a_stop and b_cur < b_stop:
        # Each list read from its decoded rows: rows[cur - first posting of the block], up
        # to the end of what is decoded (stepping on decodes the rest of the block).
        a_first = a_cur - ((a_cur - a_start) & IN_BLOCK)
        b_first = b_cur - ((b_cur - b_start) & IN_BLOCK)
        # (each list's cursor stops at the first of: its rows decoded, its stop)
        a_lim, b_lim = min(cs.decoded[ta], a_stop), min(cs.decoded[tb], b_stop)
        while True:
            a = a_rows[a_cur - a_first]
            b = b_rows[b_cur - b_first]
            if a == b:
                break
            # (no branch on which is smaller: at random rows it would be mispredicted half the time)
            a_cur += a < b
            b_cur += b < a
            if a_cur >= a_lim:
                if a_cur >= a_stop:
                    break
                reach(src, cs, ta, a_start, a_end, a_blk0, a_cur, PAST_ROWS)
                a_first, a_lim = a_cur - ((a_cur - a_start) & IN_BLOCK), min(cs.decoded[ta], a_stop)
            if b_cur >= b_lim:
                if b_cur >= b_stop:
                    break
                reach(src, cs, tb, b_start, b_end, b_blk0, b_cur, PAST_ROWS)
                b_first, b_lim = b_cur - ((b_cur - b_start) & IN_BLOCK), min(cs.decoded[tb], b_stop)
    a_at[0] = a_cur
    b_at[0] = b_cur
    return ma.skipped + mb.skipped


cdef Moved _advance_call(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                         int64_t cur, int64_t target, bint skip) noexcept nogil:
    """``advance`` as a call, for the sites a kernel reaches less often than its main
    loop (the code stays small)."""
    return advance(src, cs, t, start, end, blk0, cur, target, skip)


cdef Py_ssize_t _intersect(
    const Source* src, Cursors* cs, const double* norms, const int64_t* kinds, Py_ssize_t n, const double* weights,
    const double* mults, double boost, Py_ssize_t k, int64_t row_lo, int64_t row_hi, const int64_t* included,
    Py_ssize_t n_inc, bint use_include, const int64_t* deleted, Py_ssize_t n_del, bint skip, bint prune,
    double floor, double margin, const int64_t* starts, const int64_t* ends, const int64_t* blk0s, int64_t* cur,
    const int64_t* order, Py_ssize_t n_req, bint step_both, int64_t lead_stop, int64_t sec_stop, int64_t* keys,
    int64_t* out_rows, double* out_scores, int64_t* scored_out, int64_t* skipped_out,
) noexcept nogil:
    """:func:`conjunction_topk`'s walk (``k > 0``), over its slots' postings ``[starts[t],
    ends[t])`` (cursors ``cur``, at their starts) with the required slots in ``order``
    (shortest first; with ``step_both`` the first two step through each other, up to
    ``lead_stop``/``sec_stop``) and the top-k heap's arrays. Returns the heap's size
    (``scored_out``: postings scored, ``skipped_out``: blocks skipped)."""
    cdef Py_ssize_t size = 0, i, t
    cdef int64_t scored = 0, skipped = 0, ic = 0, dc = 0, n_excl = 0
    cdef int64_t lead = order[0], second = order[1] if n_req > 1 else order[0]
    cdef int64_t floor_key = java_key(floor) if floor > -INFINITY else NO_KEY  # what a row must beat
    cdef int64_t lead_start, lead_end, lead_blk0, lead_cur, sec_start, sec_end, sec_blk0, sec_cur
    cdef int64_t target = row_lo, d, r, key
    cdef int64_t kind
    cdef double norm, bound, freq, acc, score
    cdef bint excluded
    cdef Moved m
    for t in range(n):
        if kinds[t] == EXCLUDED:
            n_excl += 1
    # The lead's and the second required list's cursors live in locals while the
    # intersection runs (most of a conjunction's time: few candidates match), and are
    # written back for scoring.
    lead_start, lead_end, lead_blk0, lead_cur = starts[lead], ends[lead], blk0s[lead], cur[lead]
    sec_start, sec_end, sec_blk0, sec_cur = starts[second], ends[second], blk0s[second], cur[second]
    while True:
        if step_both:
            skipped += _meet(
                src, cs, lead, lead_start, lead_end, lead_stop, lead_blk0, &lead_cur,
                second, sec_start, sec_end, sec_stop, sec_blk0, &sec_cur, target, skip,
            )
            if lead_cur >= lead_stop or sec_cur >= sec_stop:
                break
            d = row(cs, lead, lead_start, lead_cur)
        else:
            m = advance(src, cs, lead, lead_start, lead_end, lead_blk0, lead_cur, target, skip)
            lead_cur = m.cur
            skipped += m.skipped
            if lead_cur >= lead_end:
                break
            d = row(cs, lead, lead_start, lead_cur)
            if d >= row_hi:
                break
            if n_req > 1:
                m = advance(src, cs, second, sec_start, sec_end, sec_blk0, sec_cur, d, skip)
                sec_cur = m.cur
                skipped += m.skipped
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
            m = _advance_call(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
            skipped += m.skipped
            cur[t] = m.cur
            if m.cur >= ends[t]:
                target = row_hi
                break
            r = row(cs, t, starts[t], m.cur)
            if r != d:
                target = r
                break
        cur[second] = sec_cur  # (the lead's last: with one required list it is the second)
        cur[lead] = lead_cur
        if target == d and use_include:
            ic = gallop(included, ic, n_inc, d)
            target = included[ic] if ic < n_inc else row_hi
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
            if java_key(bound * boost * margin) <= (keys[0] if size == k else floor_key):
                continue
        excluded = False
        for t in range(n):
            if kinds[t] == EXCLUDED:
                m = _advance_call(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
                skipped += m.skipped
                cur[t] = m.cur
                if m.cur < ends[t] and row(cs, t, starts[t], m.cur) == d:
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
                m = seek(src, cs, t, starts[t], ends[t], blk0s[t], cur[t], d, skip)
                cur[t] = m.cur
                skipped += m.skipped
                if m.cur >= ends[t] or row(cs, t, starts[t], m.cur) != d:
                    continue
            freq = tf_at(src, cs, t, starts[t], ends[t], blk0s[t], cur[t])
            acc = acc + ((weights[t] * freq) / (freq + norm)) * mults[t]
            scored += 1
        score = acc * boost
        key = java_key(score)
        if key > floor_key:
            size = heap_push(keys, out_rows, out_scores, size, k, key, d, score)
    scored_out[0] = scored
    skipped_out[0] = skipped
    return size
