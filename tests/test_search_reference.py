"""Every plan agrees with the brute-force reference, bit for bit, on random corpora and
random query trees (docs/design.md: "Statistics and BM25"; "Segment sets and ranked parts")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.operators import evaluate, indexed_search
from engine_tables import engine_table
from reference import ref_search
from strategies import corpus_and_query, search_params


def engine_hits(t: fts.Table, query, limit, offset, include_row_ids) -> list[tuple[int, float]]:
    result = t.search(query, limit=limit, offset=offset, include_row_ids=include_row_ids, columns=[])
    return list(zip(result.column("_rowid").to_pylist(), result.column("_score").to_pylist()))


def check(t: fts.Table, ref, query, params) -> None:
    expected = ref_search(ref, query, **params)
    if params["limit"] == 0:
        with pytest.raises(fts.InvalidArgument):
            engine_hits(t, query, **params)
        return
    got = engine_hits(t, query, **params)
    assert [(r, repr(s)) for r, s in got] == [(r, repr(s)) for r, s in expected]


@st.composite
def cases(draw, **corpus_kwargs):
    ref, query = draw(corpus_and_query(**corpus_kwargs))
    return ref, query, draw(search_params(ref.rows))


@given(cases(deletes=True, params=True, token_limits=True))
def test_indexed_matches_reference(case):
    ref, query, params = case
    check(engine_table(ref, "indexed"), ref, query, params)


@given(cases(deletes=True))
def test_flat_scan_matches_reference(case):
    ref, query, params = case
    check(engine_table(ref, "flat"), ref, query, params)


@given(cases(deletes=True, params=True, token_limits=True), st.lists(st.integers(0, 40), max_size=4))
def test_overlapping_segments_match_reference(case, splits):
    ref, query, params = case
    check(engine_table(ref, "segments", splits), ref, query, params)


@given(cases(deletes=True, params=True, token_limits=True, sparse=True), st.lists(st.integers(0, 40), max_size=4))
def test_segments_over_mostly_deleted_rows_match_reference(case, splits):
    """Segments built after most rows were deleted pack their rows as ordinals among the
    rows holding text (codec ``bp128-ordinals``); they answer, and merged by OPTIMIZE
    answer again, as the reference."""
    ref, query, params = case
    t = engine_table(ref, "segments", splits)
    check(t, ref, query, params)
    t.optimize()
    check(t, ref, query, params)


@given(cases(deletes=True, params=True, token_limits=True))
def test_forced_flat_scan_over_indexed_table_matches_reference(case):
    ref, query, params = case
    t = engine_table(ref, "indexed")
    t.db.settings.set("fts.force_plan", "flat_scan")
    check(t, ref, query, params)


@given(cases(deletes=True, params=True, token_limits=True), st.integers(0, 40))
def test_hybrid_tail_matches_reference(case, cut):
    ref, query, params = case
    t = engine_table(ref, "hybrid", [cut])
    plan, request = t.plan(query, limit=5)
    if t.snapshot().committed_rows > cut and request.columns:
        # Every column is indexed with positions here, so the tail is always answerable.
        assert request.choice == "hybrid", (request.choice, request.reasons)
    check(t, ref, query, params)


@given(cases(deletes=True, params=True, token_limits=True), st.sampled_from(("auto", "flat_scan")))
def test_unions_sorted_at_once_match_reference(case, plan):
    """A wide OR is one sorted union, not a merge per clause (evaluate.UNION_AT_ONCE): here
    every union is, in the general evaluator."""
    ref, query, params = case
    t = engine_table(ref, "indexed")
    t.db.settings.set("fts.force_plan", plan)
    saved = evaluate.UNION_AT_ONCE, indexed_search.TERM_KERNELS
    evaluate.UNION_AT_ONCE, indexed_search.TERM_KERNELS = 1, False
    try:
        check(t, ref, query, params)
    finally:
        evaluate.UNION_AT_ONCE, indexed_search.TERM_KERNELS = saved
