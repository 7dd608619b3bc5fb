"""The cursor's block decoding (:func:`reach`, called from the kernels' walks), and its
steps (posting_cursor.pxd, compiled in line in the walks) as a Python call for tests
(:func:`cursor_moves`)."""

import numpy as np

from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.string cimport memset

from datafusion_fts.kernels.buffers cimport Arrays, release
from datafusion_fts.kernels.postings_codec cimport Source, tuple_source


cdef void reach(const Source* src, Cursors* cs, int64_t t, int64_t start, int64_t end, int64_t blk0, int64_t cur,
                int64_t target) noexcept nogil:
    """Decode slot ``t``'s rows through posting ``cur`` (< ``end``) and on, in its block, to
    the first row >= ``target`` (``PAST_ROWS``: to the block's end): :func:`decode_to` as
    a call."""
    decode_to(src, cs, t, start, end, blk0, cur, target)


def cursor_moves(tuple src, const int64_t[::1] starts, const int64_t[::1] ends, const int64_t[::1] blk0s,
                 int64_t t, const int64_t[::1] targets, const uint8_t[::1] by_advance, bint skip, uint8_t fill):
    """Slot ``t``'s cursor moved to each of ``targets`` in turn (by :func:`advance` where
    ``by_advance``, else by :func:`seek`), after every slot's first rows were decoded
    into buffers whose bytes were ``fill`` (what a buffer may hold before decoding).
    Returns (the cursor after each move, its row or -1 at the end, blocks reported
    damaged)."""
    cdef Arrays held
    cdef Source s
    cdef Py_ssize_t n = starts.shape[0], i
    cdef Cursors cs
    curs_a = np.empty(targets.shape[0], dtype=np.int64)
    rows_a = np.empty(targets.shape[0], dtype=np.int64)
    cdef int64_t[::1] curs = curs_a, rows = rows_a
    cdef int64_t cur = starts[t]
    cdef Moved moved
    held.n = 0
    if not cursors_alloc(&cs, n):
        raise MemoryError()
    try:
        s = tuple_source(&held, src)
        with nogil:
            memset(cs.rows, fill, n * BLOCK_SIZE * sizeof(uint32_t))
            start_cursors(&s, &cs, &starts[0], &ends[0], &blk0s[0], n, 0)
            for i in range(targets.shape[0]):
                if by_advance[i]:
                    moved = advance(&s, &cs, t, starts[t], ends[t], blk0s[t], cur, targets[i], skip)
                else:
                    moved = seek(&s, &cs, t, starts[t], ends[t], blk0s[t], cur, targets[i], skip)
                cur = moved.cur
                curs[i] = cur
                rows[i] = row(&cs, t, starts[t], cur) if cur < ends[t] else -1
        return curs_a, rows_a, cs.damaged
    finally:
        cursors_free(&cs)
        release(&held)
