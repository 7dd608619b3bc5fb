"""The shared bounded heap (kernels/topk_heap.pxd) keeps exactly the best k entries by
(key desc, row asc), and java_key orders scores as Java's Double.compare does
(docs/design.md: "Order, top-k and paging"). The heap's functions are inlined into the
kernels, so they are tested through ``top_k``, whose entries are (java_key(score), row,
index)."""

from __future__ import annotations

import math
import struct

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.kernels.merge import top_k

SPECIAL = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 1.0, 1.0, 2.5, -1.0]


def java_rank(score: float) -> tuple[int, float]:
    """Double.compare order: NaN above +inf (all NaNs equal), +0.0 above -0.0."""
    if math.isnan(score):
        return (3, 0.0)
    if score == 0.0:
        return (1, 1.0 if math.copysign(1.0, score) > 0 else 0.0)
    return (2, score) if score > 0 else (0, score)


def expected_top_k(rows: np.ndarray, scores: np.ndarray, k: int) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (tuple(-x for x in java_rank(scores[i])), rows[i]))[:k]


@given(st.lists(st.sampled_from(SPECIAL) | st.floats(allow_nan=True), min_size=2, max_size=40))
def test_java_key_orders_like_double_compare(scores):
    """All kept: scores in Double.compare's order, equal ones (any NaNs, the same zero)
    by row."""
    scores = np.array(scores, dtype=np.float64)
    rows = np.arange(len(scores), dtype=np.int64)[::-1].copy()
    assert top_k(rows, scores, len(scores)).tolist() == expected_top_k(rows, scores, len(scores))


@given(
    entries=st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 10_000)), max_size=300, unique_by=lambda e: e[1]),
    cap=st.integers(0, 310),
)
def test_heap_keeps_the_best_entries_in_order(entries, cap):
    """Heavy ties (7 distinct keys): the best ``cap`` by (key desc, row asc), and each
    entry's value (its index) rides along with it."""
    keys = np.array([key for key, _ in entries], dtype=np.float64)
    rows = np.array([row for _, row in entries], dtype=np.int64)
    got = top_k(rows, keys, cap)
    expected = sorted(entries, key=lambda e: (-e[0], e[1]))[:cap]
    assert list(zip(keys[got].astype(int).tolist(), rows[got].tolist())) == expected


@given(st.lists(st.sampled_from(SPECIAL), max_size=60), st.integers(1, 70))
def test_top_k_follows_the_total_order(scores, k):
    scores = np.array(scores, dtype=np.float64)
    rows = np.arange(len(scores), dtype=np.int64)[::-1].copy()  # ties broken by row, not index
    got = top_k(rows, scores, k).tolist()
    expected = expected_top_k(rows, scores, k)
    assert got == expected
    assert [struct.pack("<d", s) for s in scores[got]] == [struct.pack("<d", s) for s in scores[expected]]
