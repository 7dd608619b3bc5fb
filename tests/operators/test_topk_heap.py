"""The shared bounded heap keeps exactly the best k entries by (key desc, row asc), and
java_key orders scores as Java's Double.compare does (docs/design.md: "Order, top-k and paging")."""

from __future__ import annotations

import math
import struct

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.operators.merge_kernels import top_k
from datafusion_fts.operators.topk_heap import heap_drain, heap_push, java_key

SPECIAL = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, -5e-324, 1.0, 1.0, 2.5, -1.0]


def java_rank(score: float) -> tuple[int, float]:
    """Double.compare order: NaN above +inf (all NaNs equal), +0.0 above -0.0."""
    if math.isnan(score):
        return (3, 0.0)
    if score == 0.0:
        return (1, 1.0 if math.copysign(1.0, score) > 0 else 0.0)
    return (2, score) if score > 0 else (0, score)


@given(st.lists(st.sampled_from(SPECIAL) | st.floats(allow_nan=True), min_size=2, max_size=40))
def test_java_key_orders_like_double_compare(scores):
    for a in scores:
        for b in scores:
            assert (java_key(a) < java_key(b)) == (java_rank(a) < java_rank(b)), (a, b)
            assert (java_key(a) == java_key(b)) == (java_rank(a) == java_rank(b)), (a, b)


@given(
    entries=st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 10_000)), max_size=300, unique_by=lambda e: e[1]),
    cap=st.integers(0, 310),
)
def test_heap_keeps_the_best_entries_in_order(entries, cap):
    keys = np.empty(cap, dtype=np.int64)
    rows = np.empty(cap, dtype=np.int64)
    values = np.empty(cap, dtype=np.float64)
    size = 0
    for key, row in entries:  # heavy ties: 7 distinct keys
        size = heap_push(keys, rows, values, size, key, row, float(row) / 2)
    heap_drain(keys, rows, values, size)
    expected = sorted(entries, key=lambda e: (-e[0], e[1]))[:cap]
    assert list(zip(keys[:size].tolist(), rows[:size].tolist())) == expected
    assert values[:size].tolist() == [row / 2 for _, row in expected]


@given(st.lists(st.sampled_from(SPECIAL), max_size=60), st.integers(1, 70))
def test_top_k_follows_the_total_order(scores, k):
    scores = np.array(scores, dtype=np.float64)
    rows = np.arange(len(scores), dtype=np.int64)[::-1].copy()  # ties broken by row, not index
    got = top_k(rows, scores, k).tolist()
    expected = sorted(range(len(scores)), key=lambda i: (tuple(-x for x in java_rank(scores[i])), rows[i]))[:k]
    assert got == expected
    assert [struct.pack("<d", s) for s in scores[got]] == [struct.pack("<d", s) for s in scores[expected]]
