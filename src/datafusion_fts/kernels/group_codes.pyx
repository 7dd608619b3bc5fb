"""Counting by a column over a match set (storage/coded_rows.py): a column kept as one
code a row (its distinct values numbered), the codes at the matching rows' places counted
or gathered. numpy's ``bincount(codes[places])`` takes three passes and converts the
codes to intp; ``count_at`` is one pass that writes nothing per row."""

import numpy as np

from libc.stdint cimport int64_t


def count_at(const code[::1] codes, const int64_t[::1] places, int64_t n):
    """How many times each code 0..n-1 occurs in ``codes[places]`` (every place and
    code in range: the caller's)."""
    counts_a = np.zeros(n, dtype=np.int64)
    cdef int64_t[::1] counts = counts_a
    cdef Py_ssize_t i
    with nogil:
        for i in range(places.shape[0]):
            counts[codes[places[i]]] += 1
    return counts_a


def count_codes(const code[::1] codes, int64_t n):
    """How many times each code 0..n-1 occurs in ``codes`` (each in range)."""
    counts_a = np.zeros(n, dtype=np.int64)
    cdef int64_t[::1] counts = counts_a
    cdef Py_ssize_t i
    with nogil:
        for i in range(codes.shape[0]):
            counts[codes[i]] += 1
    return counts_a


def codes_at(const code[::1] codes, const int64_t[::1] places):
    """``codes[places]``, of ``codes``' type (every place in range)."""
    out_a = np.empty(places.shape[0], dtype=np.asarray(codes).dtype)
    cdef code[::1] out = out_a
    cdef Py_ssize_t i
    with nogil:
        for i in range(places.shape[0]):
            out[i] = codes[places[i]]
    return out_a


def sum_codes(const code[::1] codes, const double[::1] values, int64_t n):
    """Per code 0..n-1, the sum of ``values`` at the rows holding it, added in the rows'
    order (as DataFusion adds a float column in one partition): one pass, where
    ``numpy.bincount(codes, weights=values)`` converts both arrays first."""
    sums_a = np.zeros(n, dtype=np.float64)
    cdef double[::1] sums = sums_a
    cdef Py_ssize_t i
    with nogil:
        for i in range(codes.shape[0]):
            sums[codes[i]] += values[i]
    return sums_a
