"""Moving a cursor forward in sorted row lists: the step every document-at-a-time kernel
takes (conjunctions, exclusions, prefilters, pruned disjunctions).

A term's postings are cut in blocks of ``BLOCK_SIZE`` whose last row is stored
(``block_last_row``), so a cursor seeking row ``target`` gallops over the block index
first (one comparison per block passed, blocks between never read) and then searches
one block. Without skipping (``fts.pruning`` off) it steps posting by posting: the
exhaustive baseline the benchmarks compare against.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..index.postings_kernel import BLOCK_SIZE


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
def seek(rows, blk_last, start, end, blk0, cur, target, skip):
    """Move a term's cursor ``cur`` (postings ``rows[start:end]``, its blocks from
    ``blk0`` in ``blk_last``) to its first posting with row >= ``target``.

    The next few postings are tried first (in a dense list the target is usually among
    them); then whole blocks are passed by their last row and one block is searched.
    One function (its search in line): this runs once per candidate row and list.
    Returns (new cursor, blocks skipped unread); ``end`` when the list is exhausted.
    """
    if cur >= end or rows[cur] >= target:
        return cur, 0
    if not skip:
        while cur < end and rows[cur] < target:
            cur += 1
        return cur, 0
    probe = min(cur + 4, end)
    cur += 1
    while cur < probe:
        if rows[cur] >= target:
            return cur, 0
        cur += 1
    if cur >= end:
        return end, 0
    return seek_blocks(rows, blk_last, start, end, blk0, cur, target)


@njit(cache=True, nogil=True, inline="always")
def seek_blocks(rows, blk_last, start, end, blk0, cur, target):
    """:func:`seek` past its first probes (``cur < end``): whole blocks passed by their
    last row, then one block searched."""
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
    return lower_bound(rows, cur, min(start + (blk - blk0 + 1) * BLOCK_SIZE, end), target), skipped


# Postings a cursor steps through in line before it seeks by blocks (see advance).
STEP_POSTINGS = 8


@njit(cache=True, nogil=True, inline="always")
def advance(rows, blk_last, start, end, blk0, cur, target, skip):
    """Move ``cur`` to the first posting with row >= ``target``, as a conjunction moves a
    list to a candidate row. In a dense list the target is usually a few postings on, so
    those are stepped through in line (a call per candidate row would cost more); one
    look at the posting STEP_POSTINGS on tells whether it is further, and then the blocks
    are sought at once, without stepping (with skipping on). Returns (new cursor, blocks
    skipped unread)."""
    if cur >= end or rows[cur] >= target:
        return cur, 0
    far = cur + STEP_POSTINGS
    cur += 1
    if cur >= end or rows[cur] >= target:  # the next posting: the common case
        return cur, 0
    if skip and far < end and rows[far] < target:
        return seek_blocks(rows, blk_last, start, end, blk0, far, target)
    stop = min(far, end)
    while cur < stop and rows[cur] < target:
        cur += 1
    if cur < end and rows[cur] < target:  # (only without skipping: seek steps on)
        return seek(rows, blk_last, start, end, blk0, cur, target, skip)
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
