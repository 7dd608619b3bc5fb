"""The one bounded k-heap every top-k kernel uses (docs/design.md: "Order, top-k and paging").

Entries are ``(key, row, value)``, held in three parallel arrays the caller allocates with
the heap's capacity ``cap``: ``keys`` (int64), ``rows`` (int64) and ``values`` (a
``heap_value``: float64, a score, or int64, an index into the caller's arrays).
``key`` ranks (larger first), ``row`` breaks ties (smaller first), ``value`` rides along.
The root, slot 0, is the worst entry kept, so an entry that cannot enter the top k costs
one comparison (``keys[0]`` is the threshold once ``size == cap``). Callers choose the key:
:func:`java_key` gives int64 keys whose integer order is Java's ``Double.compare`` order of
scores (NaN above +inf, +0.0 above -0.0), which is what every kernel here uses, so the heap
itself never looks at a float; ``NO_KEY`` is below every such key ("no threshold").

Use: ``size = heap_push(keys, rows, values, size, cap, key, row, value)`` per entry, then
``heap_drain(keys, rows, values, size)`` (or ``heap_results(..., base)``) leaves the
``size`` entries sorted best first in ``[:size]``.
"""

from libc.stdint cimport int64_t
from libc.string cimport memcpy

ctypedef fused heap_value:
    double
    int64_t

cdef extern from "<stdint.h>":
    # Below every java_key (java_key(-inf) is above it): "no threshold".
    const int64_t NO_KEY "INT64_MIN"


cdef inline int64_t java_key(double score) noexcept nogil:
    """An int64 whose integer order is ``Double.compare``'s order of ``score``."""
    cdef int64_t bits
    if score != score:
        return 0x7FF8000000000000LL  # every NaN: the one key above +inf's
    memcpy(&bits, &score, sizeof(double))
    if bits < 0:
        return bits ^ 0x7FFFFFFFFFFFFFFFLL  # negatives: flip all but the sign, reversing their order
    return bits


cdef inline bint below(int64_t key1, int64_t row1, int64_t key2, int64_t row2) noexcept nogil:
    """(key1, row1) ranks below (key2, row2): a smaller key, or the same key and a larger row."""
    if key1 != key2:
        return key1 < key2
    return row1 > row2


cdef inline Py_ssize_t heap_push(int64_t* keys, int64_t* rows, heap_value* values, Py_ssize_t size,
                                 Py_ssize_t cap, int64_t key, int64_t row, heap_value value) noexcept nogil:
    """Offer one entry to the heap held in ``keys/rows/values[:size]`` (capacity ``cap``);
    return the new size. When full, the entry replaces the root only if it ranks above it."""
    cdef Py_ssize_t c, p
    if size < cap:
        c = size
        size += 1
        while c > 0:  # sift up: the new entry moves above better parents
            p = (c - 1) >> 1
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


cdef inline void _sift_down(int64_t* keys, int64_t* rows, heap_value* values, Py_ssize_t c, Py_ssize_t size,
                            int64_t key, int64_t row, heap_value value) noexcept nogil:
    """Place (key, row, value) at slot ``c`` of the heap ``[:size]`` and sift it down."""
    cdef Py_ssize_t w
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


cdef inline void heap_drain(int64_t* keys, int64_t* rows, heap_value* values, Py_ssize_t size) noexcept nogil:
    """Sort the heap's ``size`` entries best first, in place (heap sort: the worst entry,
    at the root, moves to the end of the shrinking heap)."""
    cdef Py_ssize_t end
    cdef int64_t key, row
    cdef heap_value value
    for end in range(size - 1, 0, -1):
        key, row, value = keys[end], rows[end], values[end]
        keys[end], rows[end], values[end] = keys[0], rows[0], values[0]
        _sift_down(keys, rows, values, 0, end, key, row, value)


cdef inline void heap_results(int64_t* keys, int64_t* rows, double* scores, Py_ssize_t size,
                              int64_t base) noexcept nogil:
    """Sort the heap's ``size`` entries best first and shift its local rows by ``base``:
    ``rows[:size], scores[:size]`` are then what every segment kernel returns."""
    cdef Py_ssize_t i
    heap_drain(keys, rows, scores, size)
    for i in range(size):
        rows[i] += base
