"""GlobalTopK merges children under the total order of docs/design.md: "Order, top-k and paging"
(Java Double.compare: NaN above +inf, +0.0 above -0.0; then row id ascending), keeping a duplicate
row id's first score (§5.4)."""

from __future__ import annotations

import math
import struct
from typing import Iterator

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.operators.base import ExecutionPlan, search_batch
from datafusion_fts.operators.global_topk import GlobalTopK
from reference import java_order_key


class Fixed(ExecutionPlan):
    """A child that yields given (row, score) pairs in the given order."""

    def __init__(self, pairs: list[tuple[int, float]]) -> None:
        super().__init__()
        self.pairs = pairs

    def display(self) -> str:
        return f"Fixed({len(self.pairs)})"

    def execute(self) -> Iterator[pa.RecordBatch]:
        rows = np.array([r for r, _ in self.pairs], dtype=np.int64)
        scores = np.array([s for _, s in self.pairs], dtype=np.float64)
        yield search_batch(rows, scores)


def bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def run(children: list[list[tuple[int, float]]], k: int | None, offset: int = 0) -> list[tuple[int, float]]:
    out = []
    for batch in GlobalTopK([Fixed(c) for c in children], k, offset).execute():
        out += list(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()))
    return out


def expected(children: list[list[tuple[int, float]]], k: int | None, offset: int = 0) -> list[tuple[int, float]]:
    first: dict[int, float] = {}
    for child in children:
        for r, s in child:
            first.setdefault(r, s)
    ordered = sorted(first.items(), key=lambda p: java_order_key(p[1], p[0]))
    return ordered[offset:] if k is None else ordered[offset : offset + k]


def same(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    """Equal rows and bit-identical scores (NaN == NaN, -0.0 != +0.0)."""
    canon = lambda x: bits(float("nan")) if math.isnan(x) else bits(x)  # noqa: E731
    return [(r, canon(s)) for r, s in a] == [(r, canon(s)) for r, s in b]


def test_special_values_order():
    nan, inf = float("nan"), float("inf")
    child = [(5, -0.0), (4, 0.0), (3, -inf), (2, inf), (1, nan), (0, 1.0), (6, -nan)]
    got = run([child], None)
    assert [r for r, _ in got] == [1, 6, 2, 0, 4, 5, 3]
    assert bits(got[4][1]) == bits(0.0) and bits(got[5][1]) == bits(-0.0)


def test_duplicate_keeps_first_score():
    assert run([[(7, 1.0)], [(7, 9.0), (8, 2.0)]], None) == [(8, 2.0), (7, 1.0)]


def test_ties_break_by_row_id_across_children():
    got = run([[(9, 1.0), (3, 1.0)], [(1, 1.0), (5, 2.0)]], 3)
    assert got == [(5, 2.0), (1, 1.0), (3, 1.0)]


SCORES = st.sampled_from([0.0, -0.0, 1.0, 1.0, 2.5, -1.0, float("inf"), float("-inf"), float("nan")])


@given(
    st.lists(st.lists(st.tuples(st.integers(0, 30), SCORES), max_size=12), min_size=1, max_size=4),
    st.one_of(st.none(), st.integers(1, 20)),
    st.integers(0, 10),
)
def test_merge_matches_sorting_everything(children, k, offset):
    assert same(run(children, k, offset), expected(children, k, offset))


@given(st.lists(st.tuples(st.integers(0, 30), SCORES), max_size=25), st.integers(1, 10), st.integers(1, 10))
def test_smaller_k_is_a_prefix_and_pages_reassemble(pairs, k1, page):
    child = [pairs]
    full = run(child, None)
    top = run(child, k1)
    assert same(top, full[:k1])
    pages = []
    for offset in range(0, len(full) + page, page):
        pages += run(child, page, offset)
    assert same(pages, full)
