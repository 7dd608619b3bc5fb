"""Sorted term dictionaries as byte buffers: lookup by binary search and union by merging
(the compiled loops are kernels/sorted_terms.pyx).

A segment's ``terms`` are distinct and sorted by their UTF-8 bytes (Arrow's string order,
which is also code point order). Two such dictionaries merge in one linear pass, and a
term is found in O(log V) byte comparisons, so neither needs a hash table of the whole
vocabulary (``pc.unique`` / ``index_in`` rebuild one per call, a Python dict costs ~V
object allocations) — what keeps merging the fresh tier's small segments cheap.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..kernels.sorted_terms import merge_terms


def term_buffers(terms: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(utf8 bytes, int64 offsets[n+1] into them) views of a large_string array."""
    n = len(terms)
    if not n:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    if not pa.types.is_large_string(terms.type):
        terms = terms.cast(pa.large_string())
    bufs = terms.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=terms.offset + n + 1)[terms.offset :]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offsets


def union_terms(dictionaries: list[pa.Array]) -> tuple[pa.LargeStringArray, list[np.ndarray]]:
    """The sorted union of sorted, distinct term arrays, and each input term's index in it."""
    data, offsets = term_buffers(dictionaries[0])
    maps = [np.arange(len(dictionaries[0]), dtype=np.int64)]
    for terms in dictionaries[1:]:
        b_data, b_off = term_buffers(terms)
        data, offsets, map_a, map_b = merge_terms(data, offsets, b_data, b_off)
        maps = [map_a[m] for m in maps] + [map_b]
    union = pa.Array.from_buffers(
        pa.large_string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    return union, maps
