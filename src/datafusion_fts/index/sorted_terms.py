"""Sorted term dictionaries as byte buffers: lookup by binary search and union by merging,
compiled.

A segment's ``terms`` are distinct and sorted by their UTF-8 bytes (Arrow's string order,
which is also code point order). Two such dictionaries merge in one linear pass, and a
term is found in O(log V) byte comparisons, so neither needs a hash table of the whole
vocabulary (``pc.unique`` / ``index_in`` rebuild one per call, a Python dict costs ~V
object allocations) — what keeps merging the fresh tier's small segments cheap.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from numba import njit


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


@njit(cache=True, nogil=True)
def _compare(a: np.ndarray, a0: int, a1: int, b: np.ndarray, b0: int, b1: int) -> int:
    """-1, 0 or 1 as bytes a[a0:a1] sort before, equal or after b[b0:b1]."""
    n = min(a1 - a0, b1 - b0)
    for i in range(n):
        x, y = a[a0 + i], b[b0 + i]
        if x != y:
            return -1 if x < y else 1
    la, lb = a1 - a0, b1 - b0
    return 0 if la == lb else (-1 if la < lb else 1)


@njit(cache=True, nogil=True)
def find_term(data: np.ndarray, offsets: np.ndarray, needle: np.ndarray) -> int:
    """The index of ``needle`` in the sorted dictionary (``data``, ``offsets``), or -1."""
    lo, hi = 0, offsets.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        c = _compare(data, offsets[mid], offsets[mid + 1], needle, 0, needle.shape[0])
        if c == 0:
            return mid
        if c < 0:
            lo = mid + 1
        else:
            hi = mid
    return -1


@njit(cache=True, nogil=True)
def _merge(a_data, a_off, b_data, b_off):
    na, nb = a_off.shape[0] - 1, b_off.shape[0] - 1
    out_data = np.empty(a_data.shape[0] + b_data.shape[0], dtype=np.uint8)
    out_off = np.zeros(na + nb + 1, dtype=np.int64)
    map_a = np.empty(na, dtype=np.int64)
    map_b = np.empty(nb, dtype=np.int64)
    i = j = n = 0
    end = 0
    while i < na or j < nb:
        if j == nb:
            c = -1
        elif i == na:
            c = 1
        else:
            c = _compare(a_data, a_off[i], a_off[i + 1], b_data, b_off[j], b_off[j + 1])
        if c <= 0:
            s, e = a_off[i], a_off[i + 1]
            out_data[end : end + e - s] = a_data[s:e]
            map_a[i] = n
            i += 1
            if c == 0:
                map_b[j] = n
                j += 1
        else:
            s, e = b_off[j], b_off[j + 1]
            out_data[end : end + e - s] = b_data[s:e]
            map_b[j] = n
            j += 1
        end += e - s
        n += 1
        out_off[n] = end
    return out_data[:end].copy(), out_off[: n + 1].copy(), map_a, map_b


def union_terms(dictionaries: list[pa.Array]) -> tuple[pa.LargeStringArray, list[np.ndarray]]:
    """The sorted union of sorted, distinct term arrays, and each input term's index in it."""
    data, offsets = term_buffers(dictionaries[0])
    maps = [np.arange(len(dictionaries[0]), dtype=np.int64)]
    for terms in dictionaries[1:]:
        b_data, b_off = term_buffers(terms)
        data, offsets, map_a, map_b = _merge(data, offsets, b_data, b_off)
        maps = [map_a[m] for m in maps] + [map_b]
    union = pa.Array.from_buffers(
        pa.large_string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    return union, maps


@njit(cache=True, nogil=True)
def _word(data: np.ndarray, start: int, end: int, depth: int) -> np.uint64:
    """Bytes 8*depth .. 8*depth+7 of data[start:end], big-endian, zero-padded."""
    key = np.uint64(0)
    for i in range(8):
        at = start + depth * 8 + i
        key = (key << np.uint64(8)) | np.uint64(data[at] if at < end else 0)
    return key


@njit(cache=True, nogil=True)
def sort_terms(data: np.ndarray, offsets: np.ndarray, items: np.ndarray) -> np.ndarray:
    """``items`` (term indices into the byte buffers) in the byte order of their terms.

    An MSD radix over 8-byte words: a stable argsort on one word, then each run of equal
    words sorted on the next one, and a run whose terms have no more bytes by length (a
    shorter term is a prefix of the longer ones, so it sorts first)."""
    n = items.shape[0]
    keys = np.empty(n, dtype=np.uint64)
    for i in range(n):
        keys[i] = _word(data, offsets[items[i]], offsets[items[i] + 1], 0)
    out = items[np.argsort(keys, kind="mergesort")].copy()
    stack = [(0, n, 0)]
    while stack:
        a, b, depth = stack.pop()
        for i in range(a, b):
            keys[i] = _word(data, offsets[out[i]], offsets[out[i] + 1], depth)
        i = a
        while i < b:
            j = i + 1
            while j < b and keys[j] == keys[i]:
                j += 1
            if j - i > 1:
                longer = False
                for m in range(i, j):
                    if offsets[out[m] + 1] - offsets[out[m]] > 8 * (depth + 1):
                        longer = True
                run = out[i:j].copy()
                if longer:
                    nxt = np.empty(j - i, dtype=np.uint64)
                    for m in range(j - i):
                        nxt[m] = _word(data, offsets[run[m]], offsets[run[m] + 1], depth + 1)
                    out[i:j] = run[np.argsort(nxt, kind="mergesort")]
                    stack.append((i, j, depth + 1))
                else:
                    lengths = np.empty(j - i, dtype=np.int64)
                    for m in range(j - i):
                        lengths[m] = offsets[run[m] + 1] - offsets[run[m]]
                    out[i:j] = run[np.argsort(lengths, kind="mergesort")]
            i = j
    return out
