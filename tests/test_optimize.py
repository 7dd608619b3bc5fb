"""OPTIMIZE changes the index layout, never a result (docs/design.md: "SQL"; "Statistics and
BM25")."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.query import Boolean, Match, Phrase

WORDS = ["alpha", "beta", "gamma", "delta", "eps"]
QUERIES = [
    Match("body", "alpha beta"),
    Match("body", "gamma delta", operator="and"),
    Boolean(must=[Match("body", "alpha")], must_not=[Match("body", "eps")]),
    Phrase("body", "alpha beta"),
    Match("body", "alpah", fuzziness=1),
]


def results(t: fts.Table) -> list:
    out = []
    for q in QUERIES:
        r = t.search(q, limit=None, columns=[])
        out.append(list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist()))))
    return out


@given(
    st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), min_size=1, max_size=30),
    st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), max_size=20),
    st.sets(st.integers(0, 50), max_size=10),
    st.lists(st.integers(0, 50), max_size=3),
)
def test_optimize_keeps_results(first, second, deletes, cuts):
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": first}))
    bounds = sorted({0, len(first), *[c for c in cuts if c < len(first)]})
    for lo, hi in zip(bounds, bounds[1:]):
        t.build_segment("body", (lo, hi - 1), positions=True)
    if second:
        t.insert(pa.table({"body": second}))
    if deletes:
        t.delete(f"_rowid IN ({', '.join(map(str, sorted(deletes)))})")
    before = results(t)  # flat scan where the tail is unindexed
    t.optimize()
    index = t.snapshot().meta.indexes["body"]
    assert index.covered_until == t.snapshot().committed_rows - 1
    assert results(t) == before
    plan, request = t.plan(QUERIES[0])
    assert request.choice == "indexed"
    t.optimize()  # idempotent
    assert results(t) == before
