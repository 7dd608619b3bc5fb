"""The one bounded k-heap every top-k kernel uses (docs/design.md: "Order, top-k and paging").

Entries are ``(key, row, value)``: ``key`` ranks (larger first), ``row`` breaks ties
(smaller first), ``value`` rides along (a score, or an index into the caller's arrays).
The root is the worst entry kept, so an entry that cannot enter the top k costs one
comparison. Callers choose the key: :func:`java_key` gives int64 keys whose integer
order is Java's ``Double.compare`` order of scores (NaN above +inf, +0.0 above -0.0),
which is what every kernel here uses, so the heap itself never looks at a float.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import viewer
from numba.core import types

_NAN_KEY = np.int64(0x7FF8000000000000)
# Below every key (java_key(-inf) is above it): "no threshold".
NO_KEY = np.int64(-0x8000000000000000)
_FLIP = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True)
def java_key(score: float) -> int:
    """An int64 whose integer order is ``Double.compare``'s order of ``score``."""
    if score != score:
        return _NAN_KEY
    bits = viewer(score, types.int64)
    if bits < 0:
        return bits ^ _FLIP
    return bits


@njit(cache=True, nogil=True)
def below(key1, row1, key2, row2) -> bool:
    """(key1, row1) ranks below (key2, row2): a smaller key, or the same key and a larger row."""
    if key1 != key2:
        return key1 < key2
    return row1 > row2


@njit(cache=True, nogil=True)
def heap_push(keys, rows, values, size, key, row, value) -> int:
    """Offer one entry to the heap held in ``keys/rows/values[:size]`` (capacity
    ``len(keys)``); return the new size. When full, the entry replaces the root only if
    it ranks above it."""
    cap = keys.shape[0]
    if size < cap:
        c = size
        size += 1
        while c > 0:  # sift up: the new entry moves above better parents
            p = (c - 1) // 2
            if below(key, row, keys[p], rows[p]):
                keys[c] = keys[p]
                rows[c] = rows[p]
                values[c] = values[p]
                c = p
            else:
                break
        keys[c] = key
        rows[c] = row
        values[c] = value
        return size
    if cap == 0 or not below(keys[0], rows[0], key, row):
        return size
    _sift_down(keys, rows, values, 0, size, key, row, value)
    return size


@njit(cache=True, nogil=True)
def _sift_down(keys, rows, values, c, size, key, row, value) -> None:
    """Place (key, row, value) at slot ``c`` of the heap ``[:size]`` and sift it down."""
    while True:
        w = 2 * c + 1
        if w >= size:
            break
        if w + 1 < size and below(keys[w + 1], rows[w + 1], keys[w], rows[w]):
            w += 1
        if below(keys[w], rows[w], key, row):
            keys[c] = keys[w]
            rows[c] = rows[w]
            values[c] = values[w]
            c = w
        else:
            break
    keys[c] = key
    rows[c] = row
    values[c] = value


@njit(cache=True, nogil=True)
def heap_drain(keys, rows, values, size) -> None:
    """Sort the heap's ``size`` entries best first, in place (heap sort: the worst entry,
    at the root, moves to the end of the shrinking heap)."""
    for end in range(size - 1, 0, -1):
        key, row, value = keys[end], rows[end], values[end]
        keys[end], rows[end], values[end] = keys[0], rows[0], values[0]
        _sift_down(keys, rows, values, 0, end, key, row, value)


@njit(cache=True, nogil=True)
def heap_results(keys, rows, scores, size, base):
    """The heap's ``size`` entries best first, as (row ids, scores): its local rows
    shifted by ``base`` (what every segment kernel returns)."""
    heap_drain(keys, rows, scores, size)
    for i in range(size):
        rows[i] += base
    return rows[:size], scores[:size]
