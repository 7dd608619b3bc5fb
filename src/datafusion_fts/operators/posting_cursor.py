"""Moving a cursor forward in a term's postings: the step every document-at-a-time kernel
takes (conjunctions, exclusions, prefilters, pruned disjunctions).

A term's postings are cut in blocks of ``BLOCK_SIZE`` whose last row is stored
(``block_last_row``), so a cursor seeking row ``target`` gallops over the block index
first (one comparison per block passed, blocks between never read) and then searches
one block. Without skipping (``fts.pruning`` off) it steps posting by posting: the
exhaustive baseline the benchmarks compare against.

Postings are read a block at a time (:mod:`..index.postings_codec`): kernel slot ``t``
has a buffer of one block's rows and one of its term frequencies (``cs = (rows buffers,
tfs buffers, block in each rows buffer, block in each tfs buffer, [blocks that did not
decode], end of the rows decoded in each)``). A cursor is a posting index in the segment
(``start <= cur <= end`` for a term's postings ``[start, end)`` whose first block is
``blk0``). A block's rows are decoded from its first on and only as far as a cursor needs
(:func:`reach`: to the row it seeks, at least ``DECODE_AT_LEAST`` rows at a time), and
**the row of every cursor short of its end is decoded**: whatever moves a cursor
(:func:`seek`, :func:`advance`, or a step followed by :func:`reach` past the decoded
rows) keeps that true, so reading a row (:func:`row`) is one load. Blocks passed by
their last row are never decoded, nor is one whose last row already says a posting in it
is below a target (:func:`below`). Term frequencies are decoded when a row of their block
is scored (:func:`tf_at`). A block that does not decode is counted, not raised, while
the kernel walks (:func:`damaged` raises after).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..index.postings_codec import DamagedPostings, load_rows_from, load_tfs, no_refcounts
from ..kernels.invert import BLOCK_SIZE

IN_BLOCK = BLOCK_SIZE - 1  # (a posting's place in its block: index & IN_BLOCK)

# The steps a kernel takes per candidate row are compiled in line in the kernels' walks
# (which count no references either): a call passes a cursor's source and buffers as
# some ninety words, which costs more than most steps.
in_line = njit(cache=True, nogil=True, _nrt=False, inline="always")


@njit(cache=True, nogil=True)
def cursors(n):
    """Cursor state for ``n`` slots, no block decoded yet (see the module)."""
    return (
        np.empty((n, BLOCK_SIZE), dtype=np.uint32), np.empty((n, BLOCK_SIZE), dtype=np.uint32),
        np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64), np.zeros(1, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
    )


# Rows decoded at a time at least: fewer decoding calls where a cursor steps on.
DECODE_AT_LEAST = 32


@no_refcounts
def reach(src, cs, t, start, end, blk0, cur, target):
    """Decode slot ``t``'s rows through posting ``cur`` (< ``end``) and on, in its block, to
    the first row >= ``target`` (``PAST_ROWS``: to the block's end). A cursor only moves
    forward, so its row is decoded exactly when it is below ``cs[5][t]``."""
    i = cur - start
    b = blk0 + i // BLOCK_SIZE
    first = cur - (i & IN_BLOCK)
    done = 0
    if cs[2][t] == b:
        done = cs[5][t] - first
    n, ok = load_rows_from(
        src, blk0, b, first, min(first + BLOCK_SIZE, end) - first, cs[0][t], done,
        max(cur - first, done + DECODE_AT_LEAST - 1), target,
    )
    if not ok:
        cs[4][0] += 1
    cs[2][t] = b
    cs[5][t] = first + n


@in_line
def tf_at(src, cs, t, start, end, blk0, cur):
    """The term frequency of slot ``t``'s posting ``cur`` (< ``end``), as float64, as
    scores use it; a block's frequencies are decoded when the first of them is read."""
    i = cur - start
    b = blk0 + i // BLOCK_SIZE
    if cs[3][t] != b:
        s = cur - (i & IN_BLOCK)
        load_tfs(src, b, s, min(s + BLOCK_SIZE, end) - s, cs[1][t])
        cs[3][t] = b
    return np.float64(cs[1][t, i & IN_BLOCK])


@no_refcounts
def start_cursors(src, cs, starts, ends, blk0s, target):
    """Decode every slot's first rows, up to the first row >= ``target`` (the cursors start
    at their first postings)."""
    for t in range(starts.shape[0]):
        if starts[t] < ends[t]:
            reach(src, cs, t, starts[t], ends[t], blk0s[t], starts[t], target)


@njit(cache=True, nogil=True)
def damaged(cs):
    """Raise if a block read through ``cs`` did not decode (the cursors read on with rows
    inside the segment: raising where a block is decoded would make every call of the
    functions that do it count references)."""
    if cs[4][0]:
        raise DamagedPostings("a postings block's rows do not run up to its stored last row")


@njit(cache=True, nogil=True, inline="always")
def row(cs, t, start, cur):
    """The row of slot ``t``'s posting ``cur`` (decoded)."""
    return np.int64(cs[0][np.uint64(t), np.uint64((cur - start) & IN_BLOCK)])


@no_refcounts
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


# A row past every row a segment holds: decode a block to its end.
PAST_ROWS = np.int64(1) << 62


@in_line
def seek(src, cs, t, start, end, blk0, cur, target, skip):
    """Move slot ``t``'s cursor ``cur`` (postings ``[start, end)``, its blocks from
    ``blk0``) to its first posting with row >= ``target``.

    The next few postings are tried first (in a dense list the target is usually among
    them); then whole blocks are passed by their last row and one block is searched.
    This runs once per candidate row and list.
    Returns (new cursor, blocks skipped unread); ``end`` when the list is exhausted.
    """
    if cur >= end or row(cs, t, start, cur) >= target:
        return cur, 0
    return seek_past(src, cs, t, start, end, blk0, cur, target, skip)


@in_line
def seek_past(src, cs, t, start, end, blk0, cur, target, skip):
    """:func:`seek` from posting ``cur`` (< ``end``) whose row is known to be below
    ``target``, decoded or not: :func:`advance` passes postings by their block's last row
    without decoding them, and reading the row of such a posting would read whatever the
    cursor's buffer held."""
    if not skip:
        cur += 1
        while cur < end:
            if cur >= cs[5][t]:
                reach(src, cs, t, start, end, blk0, cur, PAST_ROWS)
            if row(cs, t, start, cur) >= target:
                break
            cur += 1
        return cur, 0
    probe = min(cur + 4, end)
    cur += 1
    while cur < probe:
        if cur >= cs[5][t]:  # (not decoded yet)
            b = blk0 + (cur - start) // BLOCK_SIZE
            if src[5][b] < target:  # the probes left in this block fail: none is decoded for them
                if (cur - start) & IN_BLOCK == 0:
                    break  # (the block is passed by its last row)
                cur = min(probe, start + (b - blk0 + 1) * BLOCK_SIZE)
                continue
            reach(src, cs, t, start, end, blk0, cur, target)
        if row(cs, t, start, cur) >= target:
            return cur, 0
        cur += 1
    if cur >= end:
        return end, 0
    return seek_blocks(src, cs, t, start, end, blk0, cur, target)


@in_line
def seek_blocks(src, cs, t, start, end, blk0, cur, target):
    """:func:`seek` past its first probes (``cur < end``): whole blocks passed by their
    last row, then one block searched, decoded no further than the row sought."""
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
    first = start + (blk - blk0) * BLOCK_SIZE
    if cs[2][t] != blk or cs[5][t] <= cur or np.int64(cs[0][t, cs[5][t] - 1 - first]) < target:
        reach(src, cs, t, start, end, blk0, cur, target)
    return first + lower_bound(cs[0][t], cur - first, cs[5][t] - first, target), skipped


# Postings a cursor steps through before it seeks by blocks (see advance).
STEP_POSTINGS = 8


@in_line
def below(src, cs, t, start, end, blk0, cur, target):
    """Whether slot ``t``'s posting ``cur`` (< ``end``; at or past the cursor, in its
    block or the block it moves to) has a row below ``target``: its block's last row
    tells without decoding when that is below too; else the block is decoded up to
    ``target``."""
    if cur < cs[5][t]:
        return row(cs, t, start, cur) < target
    if src[5][blk0 + (cur - start) // BLOCK_SIZE] < target:
        return True
    reach(src, cs, t, start, end, blk0, cur, target)
    return row(cs, t, start, cur) < target


@in_line
def advance(src, cs, t, start, end, blk0, cur, target, skip):
    """Move ``cur`` to the first posting with row >= ``target``, as a conjunction moves a
    list to a candidate row. In a dense list the target is usually a few postings on, so
    those are stepped through; one look at the posting STEP_POSTINGS on tells whether it
    is further, and then the blocks are sought at once, without stepping (with skipping
    on). Postings are looked at through :func:`below`: a block wholly below the target
    is never decoded. Returns (new cursor, blocks skipped unread)."""
    if cur >= end or row(cs, t, start, cur) >= target:
        return cur, 0
    far = cur + STEP_POSTINGS
    cur += 1
    if cur >= end or not below(src, cs, t, start, end, blk0, cur, target):  # the next posting: the common case
        return cur, 0
    if skip and far < end:
        far_blk = blk0 + (far - start) // BLOCK_SIZE
        if src[5][far_blk] < target or (
            far_blk == cs[2][t] and below(src, cs, t, start, end, blk0, far, target)
        ):  # (a block ahead of the cursor is not decoded to look: the cursor steps there)
            return seek_blocks(src, cs, t, start, end, blk0, far, target)
    stop = min(far, end)
    while cur < stop and below(src, cs, t, start, end, blk0, cur, target):
        cur += 1
    if cur < end and below(src, cs, t, start, end, blk0, cur, target):  # (past far: seek steps on)
        return seek_past(src, cs, t, start, end, blk0, cur, target, skip)
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


@no_refcounts
def advance_call(src, cs, t, start, end, blk0, cur, target, skip):
    """:func:`advance` as a call, for the sites a kernel reaches less often than its main
    loop: in line at every site, it made the conjunction kernel take 35 s to compile."""
    return advance(src, cs, t, start, end, blk0, cur, target, skip)
