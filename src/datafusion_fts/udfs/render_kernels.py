"""Compiled kernels of highlight and snippet: choosing a snippet's window of tokens and
writing texts with their matched tokens wrapped.

Both walk each text's tokens in order and write variable-length output, which no
pyarrow/numpy primitive expresses; each is one pass per text.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def best_windows(tok_offsets: np.ndarray, key: np.ndarray, width: np.ndarray, n_keys: int):
    """Per row, the window of at most ``width[r]`` consecutive tokens with the most
    distinct matched keys, then the most matched tokens, then the earliest; moved to centre
    its matched tokens (which keeps the same ones inside it).

    Row r's tokens are ``tok_offsets[r]:tok_offsets[r+1]``; ``key[i]`` is token i's matched
    term (-1: not matched). Returns (first, stop) token indices within each row.
    """
    n_rows = tok_offsets.shape[0] - 1
    first = np.zeros(n_rows, dtype=np.int64)
    stop = np.zeros(n_rows, dtype=np.int64)
    counts = np.zeros(max(n_keys, 1), dtype=np.int64)
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
            best = max(0, min(lo - (w - (hi - lo + 1)) // 2, n - w))
        first[r] = best
        stop[r] = best + w
    return first, stop


@njit(cache=True, nogil=True)
def _put(out: np.ndarray, at: int, src: np.ndarray, lo: int, hi: int) -> int:
    for k in range(lo, hi):
        out[at] = src[k]
        at += 1
    return at


@njit(cache=True, nogil=True)
def render(
    data: np.ndarray,
    offsets: np.ndarray,
    valid: np.ndarray,
    win_lo: np.ndarray,
    win_hi: np.ndarray,
    lead: np.ndarray,
    trail: np.ndarray,
    mark_offsets: np.ndarray,
    mark_start: np.ndarray,
    mark_end: np.ndarray,
    pre: np.ndarray,
    pre_off: np.ndarray,
    post: np.ndarray,
    post_off: np.ndarray,
    ell: np.ndarray,
    ell_off: np.ndarray,
):
    """Row r's output: an ellipsis if ``lead[r]``, the bytes ``[win_lo[r], win_hi[r])`` of
    its value with each mark ``[mark_start[m], mark_end[m])`` (row r's marks are
    ``mark_offsets[r]:mark_offsets[r+1]``, ascending, inside the window) wrapped in its
    ``pre``/``post`` string, then an ellipsis if ``trail[r]``. Offsets are relative to the
    value; the tag strings are per row (Arrow string buffers). Returns (bytes, offsets)."""
    n_rows = offsets.shape[0] - 1
    out_offsets = np.zeros(n_rows + 1, dtype=np.int64)
    for r in range(n_rows):
        size = 0
        if valid[r]:
            n_marks = mark_offsets[r + 1] - mark_offsets[r]
            size = win_hi[r] - win_lo[r] + n_marks * (pre_off[r + 1] - pre_off[r] + post_off[r + 1] - post_off[r])
            size += (np.int64(lead[r]) + np.int64(trail[r])) * (ell_off[r + 1] - ell_off[r])
        out_offsets[r + 1] = out_offsets[r] + size
    out = np.empty(out_offsets[n_rows], dtype=np.uint8)
    for r in range(n_rows):
        if not valid[r]:
            continue
        at = out_offsets[r]
        base = offsets[r]
        if lead[r]:
            at = _put(out, at, ell, ell_off[r], ell_off[r + 1])
        cursor = base + win_lo[r]
        for m in range(mark_offsets[r], mark_offsets[r + 1]):
            at = _put(out, at, data, cursor, base + mark_start[m])
            at = _put(out, at, pre, pre_off[r], pre_off[r + 1])
            at = _put(out, at, data, base + mark_start[m], base + mark_end[m])
            at = _put(out, at, post, post_off[r], post_off[r + 1])
            cursor = base + mark_end[m]
        at = _put(out, at, data, cursor, base + win_hi[r])
        if trail[r]:
            at = _put(out, at, ell, ell_off[r], ell_off[r + 1])
    return out, out_offsets
