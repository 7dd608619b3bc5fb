"""Moving a cursor forward in a term's postings: the step every document-at-a-time kernel
takes (conjunctions, exclusions, prefilters, pruned disjunctions).

A term's postings are cut in blocks of ``BLOCK_SIZE`` whose last row is stored
(``block_last_row``), so a cursor seeking row ``target`` gallops over the block index
first (one comparison per block passed, blocks between never read) and then searches
one block. Without skipping (``fts.pruning`` off) it steps posting by posting: the
exhaustive baseline the benchmarks compare against.

Postings are read a block at a time (:mod:`..index.postings_codec`): each kernel slot
``t`` has a buffer of one block's rows and one of its term frequencies (``cs = (rows
buffers, tfs buffers, block in each rows buffer, block in each tfs buffer)``), filled
when the cursor first reads a row (or a frequency) of another block, so blocks passed by
their last row are never decoded, nor the frequencies of rows never scored. A cursor
stays a posting index in the segment (``start <= cur <= end`` for a term's postings
``[start, end)`` whose first block is ``blk0``), so positions and counts are those of
the postings, whatever their layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..index.postings_codec import load_rows, load_tfs
from ..index.postings_kernel import BLOCK_SIZE


@njit(cache=True, nogil=True)
def cursors(n):
    """Cursor state for ``n`` slots, no block loaded (see the module)."""
    return (
        np.empty((n, BLOCK_SIZE), dtype=np.uint32), np.empty((n, BLOCK_SIZE), dtype=np.uint32),
        np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def row_at(src, cs, t, start, end, blk0, cur):
    """The row of posting ``cur`` of slot ``t`` (decoding its block on first use)."""
    rbuf, _, rblk, _ = cs
    i = cur - start
    b = blk0 + i // BLOCK_SIZE
    if rblk[t] != b:
        s = cur - i % BLOCK_SIZE
        load_rows(src, blk0, b, s, min(s + BLOCK_SIZE, end) - s, rbuf[t])
        rblk[t] = b
    return np.int64(rbuf[t, i % BLOCK_SIZE])


@njit(cache=True, nogil=True, inline="always")
def tf_at(src, cs, t, start, end, blk0, cur):
    """The term frequency of posting ``cur`` of slot ``t`` (as float64, as scores use it)."""
    _, tbuf, _, tblk = cs
    i = cur - start
    b = blk0 + i // BLOCK_SIZE
    if tblk[t] != b:
        s = cur - i % BLOCK_SIZE
        load_tfs(src, b, s, min(s + BLOCK_SIZE, end) - s, tbuf[t])
        tblk[t] = b
    return np.float64(tbuf[t, i % BLOCK_SIZE])


@njit(cache=True, nogil=True, inline="always")
def before(src, cs, t, start, end, blk0, cur, target):
    """Whether posting ``cur``'s row is below ``target``, without decoding its block when
    the block's last row already says so."""
    b = blk0 + (cur - start) // BLOCK_SIZE
    if cs[2][t] != b and np.int64(src[5][b]) < target:
        return True
    return row_at(src, cs, t, start, end, blk0, cur) < target


@njit(cache=True, nogil=True)
def gallop(arr, lo, hi, target):
    """The first index in [lo, hi) with ``arr[i] >= target`` (``hi`` if none); the cost
    grows with the log of the distance moved, not with the list."""
    if lo >= hi or arr[lo] >= target:
        return lo
    step = 1
    prev = lo  # arr[prev] < target
    while lo + step < hi and arr[lo + step] < target:
        prev = lo + step
        step <<= 1
    return lower_bound(arr, prev + 1, min(lo + step, hi), target)


@njit(cache=True, nogil=True, inline="always")
def lower_bound(arr, lo, hi, target):
    """The first index in [lo, hi) with ``arr[i] >= target`` (``hi`` if none), by binary
    search (in line in the caller: it runs once per seek)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def seek(src, cs, t, start, end, blk0, cur, target, skip):
    """Move slot ``t``'s cursor ``cur`` (postings ``[start, end)``, its blocks from
    ``blk0``) to its first posting with row >= ``target``.

    The next few postings are tried first (in a dense list the target is usually among
    them); then whole blocks are passed by their last row and one block is searched.
    One function (its search in line): this runs once per candidate row and list.
    Returns (new cursor, blocks skipped unread); ``end`` when the list is exhausted.
    """
    if cur >= end or row_at(src, cs, t, start, end, blk0, cur) >= target:
        return cur, 0
    if not skip:
        while cur < end and row_at(src, cs, t, start, end, blk0, cur) < target:
            cur += 1
        return cur, 0
    probe = min(cur + 4, end)
    cur += 1
    while cur < probe:
        if not before(src, cs, t, start, end, blk0, cur, target):
            return cur, 0
        cur += 1
    if cur >= end:
        return end, 0
    return seek_blocks(src, cs, t, start, end, blk0, cur, target)


@njit(cache=True, nogil=True, inline="always")
def seek_blocks(src, cs, t, start, end, blk0, cur, target):
    """:func:`seek` past its first probes (``cur < end``): whole blocks passed by their
    last row, then one block searched."""
    blk_last = src[5]
    blk = blk0 + (cur - start) // BLOCK_SIZE
    skipped = 0
    if blk_last[blk] < target:
        n_blocks = (end - start + BLOCK_SIZE - 1) // BLOCK_SIZE
        b = gallop(blk_last, blk + 1, blk0 + n_blocks, target)
        skipped = b - blk - 1
        if b >= blk0 + n_blocks:
            return end, skipped
        blk = b
        cur = start + (b - blk0) * BLOCK_SIZE
    # blk_last[blk] >= target: the answer is in [cur, the block's end)
    s = start + (blk - blk0) * BLOCK_SIZE
    row_at(src, cs, t, start, end, blk0, s)  # (the block decoded)
    return s + lower_bound(cs[0][t], cur - s, min(BLOCK_SIZE, end - s), target), skipped


# Postings a cursor steps through in line before it seeks by blocks (see advance).
STEP_POSTINGS = 8


@njit(cache=True, nogil=True, inline="always")
def advance(src, cs, t, start, end, blk0, cur, target, skip):
    """Move ``cur`` to the first posting with row >= ``target``, as a conjunction moves a
    list to a candidate row. In a dense list the target is usually a few postings on, so
    those are stepped through in line (a call per candidate row would cost more); one
    look at the posting STEP_POSTINGS on tells whether it is further, and then the blocks
    are sought at once, without stepping (with skipping on). Returns (new cursor, blocks
    skipped unread)."""
    if cur >= end or row_at(src, cs, t, start, end, blk0, cur) >= target:
        return cur, 0
    far = cur + STEP_POSTINGS
    cur += 1
    if cur >= end or not before(src, cs, t, start, end, blk0, cur, target):  # the next posting: the common case
        return cur, 0
    if skip and far < end and before(src, cs, t, start, end, blk0, far, target):
        return seek_blocks(src, cs, t, start, end, blk0, far, target)
    stop = min(far, end)
    while cur < stop and row_at(src, cs, t, start, end, blk0, cur) < target:
        cur += 1
    if cur < end and row_at(src, cs, t, start, end, blk0, cur) < target:  # (only without skipping: seek steps on)
        return seek(src, cs, t, start, end, blk0, cur, target, skip)
    return cur, 0


@njit(cache=True, nogil=True)
def slot_ranges(post_offsets, block_offsets, tids):
    """Postings ``[starts[t], ends[t])`` and first block ``blk0s[t]`` of each slot's term id
    in a segment (an empty range for id -1: the term is not in the segment)."""
    n = tids.shape[0]
    starts = np.zeros(n, dtype=np.int64)
    ends = np.zeros(n, dtype=np.int64)
    blk0s = np.zeros(n, dtype=np.int64)
    for t in range(n):
        tid = tids[t]
        if tid >= 0:
            starts[t] = post_offsets[tid]
            ends[t] = post_offsets[tid + 1]
            blk0s[t] = block_offsets[tid]
    return starts, ends, blk0s
