"""Moving a cursor forward in a term's postings: the step every document-at-a-time kernel
takes (conjunctions, exclusions, prefilters, pruned disjunctions), compiled in line in
the kernels' walks.

A term's postings are cut in blocks of ``BLOCK_SIZE`` whose last row is stored
(``block_last_row``), so a cursor seeking row ``target`` gallops over the block index
first (one comparison per block passed, blocks between never read) and then searches
one block. Without skipping (``fts.pruning`` off) it steps posting by posting: the
exhaustive baseline the benchmarks compare against.

Postings are read a block at a time (postings_codec.pxd): kernel slot ``t`` has a buffer
of one block's rows and one of its term frequencies (:class:`Cursors`). A cursor is a
posting index in the segment (``start <= cur <= end`` for a term's postings ``[start,
end)`` whose first block is ``blk0``). A block's rows are decoded from its first on and
only as far as a cursor needs (:func:`reach`: to the row it seeks, at least
``DECODE_AT_LEAST`` rows at a time), and **the row of every cursor short of its end is
decoded**: whatever moves a cursor (:func:`seek`, :func:`advance`, or a step followed by
:func:`reach` past the decoded rows) keeps that true, so reading a row (:func:`row`) is
one load. Blocks passed by their last row are never decoded, nor is one whose last row
already says a posting in it is below a target (:func:`below`). Term frequencies are
decoded when a row of their block is scored (:func:`tf_at`). A block that does not
decode is counted, not raised, while the kernel walks (``Cursors.damaged``: the kernel
raises after, holding the GIL).
"""

from libc.stdint cimport int64_t, uint32_t
from libc.stdlib cimport free, malloc

from datafusion_fts.kernels.invert cimport BLOCK_SIZE
from datafusion_fts.kernels.postings_codec cimport Source, load_rows_from, load_tfs

cdef enum:
    IN_BLOCK = BLOCK_SIZE - 1  # (a posting's place in its block: index & IN_BLOCK)
    # Rows decoded at a time at least: fewer decoding calls where a cursor steps on.
    DECODE_AT_LEAST = 32
    # Postings a cursor steps through before it seeks by blocks (see advance).
    STEP_POSTINGS = 8

cdef extern from *:
    """
    #define FTS_PAST_ROWS (((int64_t)1) << 62)
    """
    # A row past every row a segment holds: decode a block to its end.
    const int64_t PAST_ROWS "FTS_PAST_ROWS"


cdef struct Cursors:
    # The decoding state of ``n`` slots' cursors.
    uint32_t* rows  # slot t's block of rows at rows[t * BLOCK_SIZE :], decoded up to ``decoded[t]``
    uint32_t* tfs  # slot t's block of term frequencies, likewise
    int64_t* row_block  # the block in each rows buffer (-1: none)
    int64_t* tf_block  # the block in each tfs buffer (-1: none)
    int64_t* decoded  # the end of the rows decoded in each (a posting index)
    int64_t damaged  # blocks that did not decode


cdef struct Moved:
    # Where a cursor moved to, and the blocks it passed unread.
    int64_t cur
    int64_t skipped


cdef inline bint cursors_alloc(Cursors* cs, Py_ssize_t n) noexcept nogil:
    """Cursor state for ``n`` slots, no block decoded yet (one allocation; False when out
    of memory). Free it with :func:`cursors_free`."""
    cdef Py_ssize_t m = n if n > 0 else 1
    cdef Py_ssize_t t
    cdef char* mem = <char*>malloc(m * (2 * BLOCK_SIZE * sizeof(uint32_t) + 3 * sizeof(int64_t)))
    if mem == NULL:
        return False
    cs.row_block = <int64_t*>mem
    cs.tf_block = cs.row_block + m
    cs.decoded = cs.tf_block + m
    cs.rows = <uint32_t*>(cs.decoded + m)
    cs.tfs = cs.rows + m * BLOCK_SIZE
    cs.damaged = 0
    for t in range(m):
        cs.row_block[t] = -1
        cs.tf_block[t] = -1
        cs.decoded[t] = 0
    return True


cdef inline void cursors_free(Cursors* cs) noexcept nogil:
    free(cs.row_block)
    cs.row_block = NULL


cdef void reach(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0, int64_t cur,
                int64_t target) noexcept nogil
# (:func:`decode_to` as a call, as numba's was: in line at every cursor step, at -O3, it
# made a conjunction of two medium terms 1.2x numba's time.)


cdef inline void decode_to(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                           int64_t cur, int64_t target) noexcept nogil:
    """Decode slot ``t``'s rows through posting ``cur`` (< ``end``) and on, in its block, to
    the first row >= ``target`` (``PAST_ROWS``: to the block's end). A cursor only moves
    forward, so its row is decoded exactly when it is below ``cs.decoded[t]``. In line:
    for a loop over whole blocks; the cursor steps call :func:`reach`."""
    cdef int64_t i = cur - start
    cdef int64_t b = blk0 + i // BLOCK_SIZE
    cdef int64_t first = cur - (i & IN_BLOCK)
    cdef int64_t done = 0
    cdef int64_t n
    cdef bint ok
    if cs.row_block[t] == b:
        done = cs.decoded[t] - first
    n = load_rows_from(
        src, blk0, b, first, min(first + BLOCK_SIZE, end) - first, cs.rows + t * BLOCK_SIZE, done,
        max(cur - first, done + DECODE_AT_LEAST - 1), target, &ok,
    )
    if not ok:
        cs.damaged += 1
    cs.row_block[t] = b
    cs.decoded[t] = first + n


cdef inline double tf_at(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                         int64_t cur) noexcept nogil:
    """The term frequency of slot ``t``'s posting ``cur`` (< ``end``), as float64, as
    scores use it; a block's frequencies are decoded when the first of them is read."""
    cdef int64_t i = cur - start
    cdef int64_t b = blk0 + i // BLOCK_SIZE
    cdef int64_t s
    if cs.tf_block[t] != b:
        s = cur - (i & IN_BLOCK)
        load_tfs(src, b, s, min(s + BLOCK_SIZE, end) - s, cs.tfs + t * BLOCK_SIZE)
        cs.tf_block[t] = b
    return <double>cs.tfs[t * BLOCK_SIZE + (i & IN_BLOCK)]


cdef inline void start_cursors(const Source* src, Cursors* cs, const int64_t* starts, const int64_t* ends,
                               const int64_t* blk0s, Py_ssize_t n, int64_t target) noexcept nogil:
    """Decode every slot's first rows, up to the first row >= ``target`` (the cursors start
    at their first postings)."""
    cdef Py_ssize_t t
    for t in range(n):
        if starts[t] < ends[t]:
            reach(src, cs, t, starts[t], ends[t], blk0s[t], starts[t], target)


cdef inline int64_t row(const Cursors* cs, int64_t t, int64_t start, int64_t cur) noexcept nogil:
    """The row of slot ``t``'s posting ``cur`` (decoded)."""
    return cs.rows[t * BLOCK_SIZE + ((cur - start) & IN_BLOCK)]


ctypedef fused sorted_t:
    uint32_t
    int64_t


cdef inline int64_t lower_bound(const sorted_t* arr, int64_t lo, int64_t hi, int64_t target) noexcept nogil:
    """The first index in [lo, hi) with ``arr[i] >= target`` (``hi`` if none), by binary
    search."""
    cdef int64_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int64_t gallop(const sorted_t* arr, int64_t lo, int64_t hi, int64_t target) noexcept nogil:
    """The first index in [lo, hi) with ``arr[i] >= target`` (``hi`` if none); the cost
    grows with the log of the distance moved, not with the list."""
    cdef int64_t step = 1
    cdef int64_t prev = lo  # arr[prev] < target
    if lo >= hi or arr[lo] >= target:
        return lo
    while lo + step < hi and arr[lo + step] < target:
        prev = lo + step
        step <<= 1
    return lower_bound(arr, prev + 1, min(lo + step, hi), target)


cdef inline Moved seek(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                       int64_t cur, int64_t target, bint skip) noexcept nogil:
    """Move slot ``t``'s cursor ``cur`` (postings ``[start, end)``, its blocks from
    ``blk0``) to its first posting with row >= ``target``.

    The next few postings are tried first (in a dense list the target is usually among
    them); then whole blocks are passed by their last row and one block is searched.
    This runs once per candidate row and list. Returns (new cursor, blocks skipped
    unread); ``end`` when the list is exhausted."""
    if cur >= end or row(cs, t, start, cur) >= target:
        return Moved(cur, 0)
    return seek_past(src, cs, t, start, end, blk0, cur, target, skip)


cdef inline Moved seek_past(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                            int64_t cur, int64_t target, bint skip) noexcept nogil:
    """:func:`seek` from posting ``cur`` (< ``end``) whose row is known to be below
    ``target``, decoded or not: :func:`advance` passes postings by their block's last row
    without decoding them, and reading the row of such a posting would read whatever the
    cursor's buffer held."""
    cdef int64_t probe, b
    if not skip:
        cur += 1
        while cur < end:
            if cur >= cs.decoded[t]:
                reach(src, cs, t, start, end, blk0, cur, PAST_ROWS)
            if row(cs, t, start, cur) >= target:
                break
            cur += 1
        return Moved(cur, 0)
    probe = min(cur + 4, end)
    cur += 1
    while cur < probe:
        if cur >= cs.decoded[t]:  # (not decoded yet)
            b = blk0 + (cur - start) // BLOCK_SIZE
            if src.blk_last[b] < target:  # the probes left in this block fail: none is decoded for them
                if (cur - start) & IN_BLOCK == 0:
                    break  # (the block is passed by its last row)
                cur = min(probe, start + (b - blk0 + 1) * BLOCK_SIZE)
                continue
            reach(src, cs, t, start, end, blk0, cur, target)
        if row(cs, t, start, cur) >= target:
            return Moved(cur, 0)
        cur += 1
    if cur >= end:
        return Moved(end, 0)
    return seek_blocks(src, cs, t, start, end, blk0, cur, target)


cdef inline Moved seek_blocks(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                              int64_t cur, int64_t target) noexcept nogil:
    """:func:`seek` past its first probes (``cur < end``): whole blocks passed by their
    last row, then one block searched, decoded no further than the row sought."""
    cdef const uint32_t* blk_last = src.blk_last
    cdef const uint32_t* rows = cs.rows + t * BLOCK_SIZE
    cdef int64_t blk = blk0 + (cur - start) // BLOCK_SIZE
    cdef int64_t skipped = 0
    cdef int64_t n_blocks, b, first
    if blk_last[blk] < target:
        n_blocks = (end - start + BLOCK_SIZE - 1) // BLOCK_SIZE
        b = gallop(blk_last, blk + 1, blk0 + n_blocks, target)
        skipped = b - blk - 1
        if b >= blk0 + n_blocks:
            return Moved(end, skipped)
        blk = b
        cur = start + (b - blk0) * BLOCK_SIZE
    # blk_last[blk] >= target: the answer is in [cur, the block's end)
    first = start + (blk - blk0) * BLOCK_SIZE
    if cs.row_block[t] != blk or cs.decoded[t] <= cur or <int64_t>rows[cs.decoded[t] - 1 - first] < target:
        reach(src, cs, t, start, end, blk0, cur, target)
    return Moved(first + lower_bound(rows, cur - first, cs.decoded[t] - first, target), skipped)


cdef inline bint below(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                       int64_t cur, int64_t target) noexcept nogil:
    """Whether slot ``t``'s posting ``cur`` (< ``end``; at or past the cursor, in its
    block or the block it moves to) has a row below ``target``: its block's last row
    tells without decoding when that is below too; else the block is decoded up to
    ``target``."""
    if cur < cs.decoded[t]:
        return row(cs, t, start, cur) < target
    if src.blk_last[blk0 + (cur - start) // BLOCK_SIZE] < target:
        return True
    reach(src, cs, t, start, end, blk0, cur, target)
    return row(cs, t, start, cur) < target


cdef inline Moved advance(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0,
                          int64_t cur, int64_t target, bint skip) noexcept nogil:
    """Move ``cur`` to the first posting with row >= ``target``, as a conjunction moves a
    list to a candidate row. In a dense list the target is usually a few postings on, so
    those are stepped through; one look at the posting STEP_POSTINGS on tells whether it
    is further, and then the blocks are sought at once, without stepping (with skipping
    on). Postings are looked at through :func:`below`: a block wholly below the target
    is never decoded. Returns (new cursor, blocks skipped unread)."""
    cdef int64_t far, far_blk, stop
    if cur >= end or row(cs, t, start, cur) >= target:
        return Moved(cur, 0)
    far = cur + STEP_POSTINGS
    cur += 1
    if cur >= end or not below(src, cs, t, start, end, blk0, cur, target):  # the next posting: the common case
        return Moved(cur, 0)
    if skip and far < end:
        far_blk = blk0 + (far - start) // BLOCK_SIZE
        if src.blk_last[far_blk] < target or (
            far_blk == cs.row_block[t] and below(src, cs, t, start, end, blk0, far, target)
        ):  # (a block ahead of the cursor is not decoded to look: the cursor steps there)
            return seek_blocks(src, cs, t, start, end, blk0, far, target)
    stop = min(far, end)
    while cur < stop and below(src, cs, t, start, end, blk0, cur, target):
        cur += 1
    if cur < end and below(src, cs, t, start, end, blk0, cur, target):  # (past far: seek steps on)
        return seek_past(src, cs, t, start, end, blk0, cur, target, skip)
    return Moved(cur, 0)


cdef inline void slot_ranges(const int64_t* post_offsets, const int64_t* block_offsets, const int64_t* tids,
                             Py_ssize_t n, int64_t* starts, int64_t* ends, int64_t* blk0s) noexcept nogil:
    """Postings ``[starts[t], ends[t])`` and first block ``blk0s[t]`` of each slot's term id
    in a segment (an empty range for id -1: the term is not in the segment)."""
    cdef Py_ssize_t t
    cdef int64_t tid
    for t in range(n):
        tid = tids[t]
        if tid >= 0:
            starts[t] = post_offsets[tid]
            ends[t] = post_offsets[tid + 1]
            blk0s[t] = block_offsets[tid]
        else:
            starts[t] = ends[t] = blk0s[t] = 0
