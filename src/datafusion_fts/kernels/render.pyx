"""Highlight and snippet: choosing a snippet's window of tokens and writing texts with
their matched tokens wrapped (udfs/highlight.py).

Both walk each text's tokens in order and write variable-length output, which no
pyarrow/numpy primitive expresses; each is one pass per text.
"""

import numpy as np

from libc.string cimport memcpy
from libc.stdint cimport int64_t, uint8_t


def best_windows(const int64_t[::1] tok_offsets, const int64_t[::1] key, const int64_t[::1] width,
                 int64_t n_keys):
    """Per row, the window of at most ``width[r]`` consecutive tokens with the most
    distinct matched keys, then the most matched tokens, then the earliest; moved to centre
    its matched tokens (which keeps the same ones inside it).

    Row r's tokens are ``tok_offsets[r]:tok_offsets[r+1]``; ``key[i]`` is token i's matched
    term (-1: not matched). Returns (first, stop) token indices within each row.
    """
    cdef Py_ssize_t n_rows = tok_offsets.shape[0] - 1
    first_arr = np.zeros(n_rows, dtype=np.int64)
    stop_arr = np.zeros(n_rows, dtype=np.int64)
    counts_arr = np.zeros(max(n_keys, 1), dtype=np.int64)
    cdef int64_t[::1] first = first_arr, stop = stop_arr, counts = counts_arr
    cdef int64_t r, a, b, n, w, i, s, out_i, in_i, distinct, matched
    cdef int64_t best, best_distinct, best_matched, lo, hi
    with nogil:
        for r in range(n_rows):
            a, b = tok_offsets[r], tok_offsets[r + 1]
            n = b - a
            w = min(width[r], n)
            if w <= 0:
                continue
            distinct = 0
            matched = 0
            for i in range(a, a + w):
                if key[i] >= 0:
                    matched += 1
                    if counts[key[i]] == 0:
                        distinct += 1
                    counts[key[i]] += 1
            best, best_distinct, best_matched = 0, distinct, matched
            for s in range(1, n - w + 1):
                out_i, in_i = a + s - 1, a + s + w - 1
                if key[out_i] >= 0:
                    matched -= 1
                    counts[key[out_i]] -= 1
                    if counts[key[out_i]] == 0:
                        distinct -= 1
                if key[in_i] >= 0:
                    matched += 1
                    if counts[key[in_i]] == 0:
                        distinct += 1
                    counts[key[in_i]] += 1
                if distinct > best_distinct or (distinct == best_distinct and matched > best_matched):
                    best, best_distinct, best_matched = s, distinct, matched
            for i in range(a + n - w, b):  # the last window's counts back to zero
                if key[i] >= 0:
                    counts[key[i]] -= 1
            if best_matched:
                lo, hi = -1, -1
                for i in range(a + best, a + best + w):
                    if key[i] >= 0:
                        if lo < 0:
                            lo = i - a
                        hi = i - a
                # (a floor division: the numerator may be negative)
                best = max(0, min(lo - _floor_half(w - (hi - lo + 1)), n - w))
            first[r] = best
            stop[r] = best + w
    return first_arr, stop_arr


cdef inline int64_t _floor_half(int64_t x) noexcept nogil:
    """``x // 2`` as Python floors it, for any sign."""
    return x >> 1


cdef inline int64_t _put(uint8_t* out, int64_t at, const uint8_t* src, int64_t lo, int64_t hi) noexcept nogil:
    if hi > lo:
        memcpy(out + at, src + lo, hi - lo)
        return at + hi - lo
    return at


def render(
    const uint8_t[::1] data,
    const int64_t[::1] offsets,
    const uint8_t[::1] valid,
    const int64_t[::1] win_lo,
    const int64_t[::1] win_hi,
    const uint8_t[::1] lead,
    const uint8_t[::1] trail,
    const int64_t[::1] mark_offsets,
    const int64_t[::1] mark_start,
    const int64_t[::1] mark_end,
    const uint8_t[::1] pre,
    const int64_t[::1] pre_off,
    const uint8_t[::1] post,
    const int64_t[::1] post_off,
    const uint8_t[::1] ell,
    const int64_t[::1] ell_off,
):
    """Row r's output: an ellipsis if ``lead[r]``, the bytes ``[win_lo[r], win_hi[r])`` of
    its value with each mark ``[mark_start[m], mark_end[m])`` (row r's marks are
    ``mark_offsets[r]:mark_offsets[r+1]``, ascending, inside the window) wrapped in its
    ``pre``/``post`` string, then an ellipsis if ``trail[r]``. Offsets are relative to the
    value; the tag strings are per row (Arrow string buffers); ``valid``, ``lead`` and
    ``trail`` are bool arrays viewed as bytes. Returns (bytes, offsets)."""
    cdef Py_ssize_t n_rows = offsets.shape[0] - 1
    out_offsets_arr = np.zeros(n_rows + 1, dtype=np.int64)
    cdef int64_t[::1] out_offsets = out_offsets_arr
    cdef int64_t r, m, size, n_marks, at, base, cursor
    with nogil:
        for r in range(n_rows):
            size = 0
            if valid[r]:
                n_marks = mark_offsets[r + 1] - mark_offsets[r]
                size = win_hi[r] - win_lo[r] + n_marks * (pre_off[r + 1] - pre_off[r] + post_off[r + 1] - post_off[r])
                size += (<int64_t>lead[r] + <int64_t>trail[r]) * (ell_off[r + 1] - ell_off[r])
            out_offsets[r + 1] = out_offsets[r] + size
    out_arr = np.empty(out_offsets[n_rows], dtype=np.uint8)
    if out_offsets[n_rows] == 0:
        return out_arr, out_offsets_arr
    cdef uint8_t[::1] out_view = out_arr
    cdef uint8_t* out = &out_view[0]
    cdef const uint8_t* d = &data[0] if data.shape[0] else NULL
    cdef const uint8_t* p = &pre[0] if pre.shape[0] else NULL
    cdef const uint8_t* q = &post[0] if post.shape[0] else NULL
    cdef const uint8_t* e = &ell[0] if ell.shape[0] else NULL
    with nogil:
        for r in range(n_rows):
            if not valid[r]:
                continue
            at = out_offsets[r]
            base = offsets[r]
            if lead[r]:
                at = _put(out, at, e, ell_off[r], ell_off[r + 1])
            cursor = base + win_lo[r]
            for m in range(mark_offsets[r], mark_offsets[r + 1]):
                at = _put(out, at, d, cursor, base + mark_start[m])
                at = _put(out, at, p, pre_off[r], pre_off[r + 1])
                at = _put(out, at, d, base + mark_start[m], base + mark_end[m])
                at = _put(out, at, q, post_off[r], post_off[r + 1])
                cursor = base + mark_end[m]
            at = _put(out, at, d, cursor, base + win_hi[r])
            if trail[r]:
                at = _put(out, at, e, ell_off[r], ell_off[r + 1])
    return out_arr, out_offsets_arr
