"""HybridResidualSearch: the gates that send a query elsewhere (fail closed, docs/design.md: "The
operators"), the tail cache and its invalidation, and agreement with the other plans."""

from __future__ import annotations

from unittest import mock

import pyarrow as pa
import pytest
from engine_tables import engine_table
from hypothesis import given, settings
from hypothesis import strategies as st
from test_search_reference import cases, check

import datafusion_fts as fts
from datafusion_fts.index.building import build_range
from datafusion_fts.query import Boolean, Match, Phrase

BODIES = ["alpha beta", "alpha", "beta gamma", "alpha alpha delta", "gamma", "alpha beta beta"]


def table(positions: bool = False, limit: int | None = None) -> fts.Table:
    """Rows 0..3 indexed, rows 4..5 a committed tail no segment holds."""
    db = fts.connect(config={"fts.residual_row_limit": limit} if limit is not None else None)
    t = db.create_table("docs", pa.table({"body": BODIES}))
    t.build_segment("body", (0, 3), positions=positions)
    return t


def hits(t: fts.Table, query) -> list:
    r = t.search(query, limit=None, columns=[])
    return list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist())))


def every_plan(t: fts.Table, query) -> dict[str, list]:
    out = {}
    for plan in ("auto", "hybrid", "flat_scan"):
        t.db.settings.set("fts.force_plan", plan)
        out[plan] = hits(t, query)
    t.db.settings.set("fts.force_plan", "auto")
    return out


def test_tail_is_searched_by_the_hybrid_plan_with_exact_scores():
    t = table()
    _, request = t.plan(Match("body", "alpha"))
    assert request.choice == "hybrid"
    results = every_plan(t, Match("body", "alpha beta"))
    assert results["auto"] == results["hybrid"] == results["flat_scan"]
    t.optimize()
    assert t.plan(Match("body", "alpha"))[1].choice == "indexed"
    assert hits(t, Match("body", "alpha beta")) == results["auto"]


def test_gate_tail_above_the_limit_falls_back_to_flat_scan():
    t = table(limit=1)
    _, request = t.plan(Match("body", "alpha"))
    assert request.choice == "flat_scan"
    assert any("exceeds fts.residual_row_limit = 1" in r for r in request.reasons)
    t.db.settings.set("fts.force_plan", "hybrid")
    with pytest.raises(fts.PlanError, match="residual_row_limit"):
        t.search(Match("body", "alpha"))
    t.db.settings.set("fts.force_plan", "indexed")
    with pytest.raises(fts.PlanError, match=r"index covers rows \.\.3 of \.\.5"):
        t.search(Match("body", "alpha"))


def test_gate_phrase_without_positions_falls_back_to_flat_scan():
    t = table(positions=False)
    _, request = t.plan(Phrase("body", "alpha beta"))
    assert request.choice == "flat_scan"
    assert any("no positions" in r for r in request.reasons)
    assert [row for row, _ in hits(t, Phrase("body", "alpha beta"))] == [0, 5]


def test_phrase_on_a_positional_index_with_a_tail_is_hybrid():
    t = table(positions=True)
    _, request = t.plan(Phrase("body", "alpha beta"))
    assert request.choice == "hybrid"
    results = every_plan(t, Phrase("body", "alpha beta"))
    assert results["auto"] == results["flat_scan"]


def tail_state(t: fts.Table) -> tuple[bool, int]:
    plan, _ = t.plan(Match("body", "alpha"))
    hybrid = plan.children()[0]
    (info,) = hybrid.tails.values()
    return info.cached, info.rows


def test_tail_cache_hits_and_invalidation():
    t = table()
    assert tail_state(t) == (False, 2)
    assert tail_state(t) == (True, 2)  # unchanged tail: nothing tokenized again
    t.insert(pa.table({"body": ["alpha"]}))
    assert tail_state(t) == (True, 2)  # fresh rows have segments of their own: same tail
    t.flush()
    assert tail_state(t) == (True, 2)  # ... persisted at the flush: still the same tail
    t.delete("_rowid = 5")
    assert tail_state(t) == (False, 2)  # a delete changes what the tail holds
    before = hits(t, Match("body", "alpha beta"))
    t.optimize()
    assert t.plan(Match("body", "alpha"))[1].choice == "indexed"
    assert hits(t, Match("body", "alpha beta")) == before


def test_tail_cache_is_bounded():
    t = table()
    t.db.settings.set("fts.tail_cache_entries", 1)
    tail_state(t)
    t.delete("_rowid = 4")
    tail_state(t)
    assert len(t.db.segment_sets._tails) == 1


def test_tail_ranges_are_the_rows_no_segment_holds():
    """A gap between segments is a tail too; fresh rows after it are not."""
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": BODIES}))
    t.build_segment("body", (0, 1))
    t.build_segment("body", (4, 5))
    t.insert(pa.table({"body": ["alpha gamma"]}))
    plan, request = t.plan(Match("body", "alpha"))
    assert request.choice == "hybrid"
    assert plan.children()[0].display() == "HybridResidualSearch: tail=body[rows 2..3]"
    results = every_plan(t, Match("body", "alpha gamma"))
    assert results["auto"] == results["hybrid"] == results["flat_scan"]
    assert t.db.counters["tail_rows_tokenized"] == 2  # the gap, once (the plan is cached after)


def test_without_the_cache_the_tail_keeps_only_the_query_terms():
    t = table(positions=True)
    t.db.settings.set("fts.tail_cache_entries", 0)
    query = Boolean(should=[Match("body", "gamma zeta"), Match("body", "alphq", fuzziness=1)],
                    must_not=[Phrase("body", "beta beta")])
    plan, request = t.plan(query, limit=None)
    assert request.choice == "hybrid"
    hybrid = plan.children()[0]
    assert hybrid.tails["body"].terms_only and not hybrid.tails["body"].cached
    tail_parts = [p for p in hybrid.child.sets["body"].parts if p.segment.meta.id.startswith("tail-")]
    # rows 4..5 are "gamma", "alpha beta beta": of their terms the query reads gamma, alpha
    # (the tail's expansion of alphq~1) and beta; zeta occurs nowhere
    assert [p.segment.terms.to_pylist() for p in tail_parts] == [["alpha", "beta", "gamma"]]
    assert hits(t, query) == every_plan(t, query)["flat_scan"]


@settings(max_examples=40)
@given(cases(deletes=True, params=True, token_limits=True), st.integers(0, 40), st.sampled_from((0, 16)))
def test_hybrid_tail_in_parallel_pieces_matches_reference(case, cut, cache_entries):
    """The tail cut into pieces of a few rows (tokenized in parallel threads), with the
    tail cache on (whole tail indexed) and off (only the query's terms kept)."""
    ref, query, params = case
    db = fts.connect(config={"fts.tail_cache_entries": cache_entries})
    with mock.patch.object(build_range, "TAIL_PIECE_ROWS", 2):
        t = engine_table(ref, "hybrid", [cut], db=db)
        check(t, ref, query, params)


@pytest.mark.parametrize("cache_entries, parts", [(16, 1), (0, 2)])
def test_a_cached_tail_is_one_segment_part_per_gap(cache_entries, parts):
    """The tail is tokenized in parallel pieces; cached, they are merged into one segment
    (every later query then runs one kernel per gap, not per piece)."""
    db = fts.connect(config={"fts.tail_cache_entries": cache_entries})
    t = db.create_table("docs", pa.table({"body": BODIES * 3}))
    t.build_segment("body", (0, 5))  # rows 6..17 are the tail
    query = Match("body", "alpha gamma")
    with mock.patch.object(build_range, "TAIL_PIECE_ROWS", 2), mock.patch.object(build_range, "TAIL_WORKERS", 2):
        plan, request = t.plan(query, limit=None)
        assert request.choice == "hybrid"
        hybrid = plan.children()[0]
        tail_parts = [p for p in hybrid.child.sets["body"].parts if p.segment.meta.id.startswith("tail-")]
        assert len(tail_parts) == parts
        assert tail_parts[0].segment.meta.lo == 6
        assert hits(t, query) == every_plan(t, query)["flat_scan"]
