"""The search planner's rules (docs/design.md: "The planner"): each rule's choice and its reason,
the forced plans, and the physical plan they produce; every plan answers like the reference."""

from __future__ import annotations

import pyarrow as pa
import pytest
from reference import RefTable, ref_search

import datafusion_fts as fts
from datafusion_fts.errors import CatalogError, InvalidArgument, PlanError
from datafusion_fts.planner.plan_search import (
    RULES,
    SearchRequest,
    apply_rules,
    check_columns,
    choose_search_operator,
    plan_search,
)
from datafusion_fts.query import Boolean, Match, MultiMatch, Phrase, Prefix

BODIES = ["alpha beta", "beta gamma", "alpha alpha delta", None, "gamma alpha beta", "delta"]
TITLES = ["alpha", "beta", "gamma", "delta", None, "alpha beta"]
REF = RefTable(rows={i: {"title": t, "body": b} for i, (t, b) in enumerate(zip(TITLES, BODIES))})


def make_db(index: dict[str, dict] | None = None) -> fts.Database:
    db = fts.connect()
    t = db.create_table(
        "docs",
        pa.table({"id": pa.array(range(len(BODIES)), pa.int64()), "title": TITLES, "body": BODIES}),
    )
    for column, options in (index or {}).items():
        t.create_index(column, **options)
    return db


def request(db: fts.Database, query, **kwargs) -> SearchRequest:
    return SearchRequest(db.snapshot("docs"), query, kwargs.pop("k", None), **kwargs)


def decide(req: SearchRequest) -> SearchRequest:
    """The rules' decisions as a search gets them (memoized per snapshot and query shape);
    each is checked against the rules run one by one."""
    decided = apply_rules(req)
    for rule in RULES:
        req = rule(req)
    assert decided == req
    return decided


def test_rules_run_column_checks_first():
    assert RULES[0] is check_columns
    assert choose_search_operator in RULES


# ------------------------------------------------------------------------ check_columns


def test_check_columns_lists_each_column_once_in_leaf_order():
    db = make_db()
    query = Boolean(
        must=(Match("title", "a"),),
        should=(MultiMatch("b", ("body", "title")), Prefix("body", "al")),
        must_not=(Phrase("title", "x y"),),
    )
    assert check_columns(request(db, query)).columns == ("title", "body")


def test_leaf_without_a_column_is_a_plan_error():
    with pytest.raises(PlanError):
        check_columns(request(make_db(), Boolean(must=(Match(None, "alpha"),))))


def test_unknown_column_is_a_catalog_error_naming_the_columns():
    with pytest.raises(CatalogError) as info:
        check_columns(request(make_db(), Match("nosuch", "alpha")))
    assert "nosuch" in str(info.value) and "body" in str(info.value)


def test_non_text_column_is_refused():
    with pytest.raises(InvalidArgument) as info:
        check_columns(request(make_db(), Match("id", "1")))
    assert "id" in str(info.value)


# --------------------------------------------------------------- choose_search_operator


@pytest.mark.parametrize(
    "index, query, choice, reasons",
    [
        (
            {},
            Match("body", "alpha"),
            "flat_scan",
            ("not IndexedSearch: body: no index", "not HybridResidualSearch: body: no index to extend with a tail"),
        ),
        (
            {"body": {}},
            Match("body", "alpha"),
            "indexed",
            ("every column's index covers every committed row",),
        ),
        (
            {"body": {}},
            Phrase("body", "alpha beta"),
            "flat_scan",
            (
                "not IndexedSearch: body: phrase query but the index has no positions",
                "not HybridResidualSearch: body: phrase query but the index has no positions",
            ),
        ),
        (
            {"body": {"positions": True}},
            Phrase("body", "alpha beta"),
            "indexed",
            ("every column's index covers every committed row",),
        ),
        (
            {"body": {}},
            Boolean(must=(Match("body", "a"), Match("title", "b"))),
            "flat_scan",
            (
                "not IndexedSearch: title: no index",
                "not HybridResidualSearch: title: no index to extend with a tail",
            ),
        ),
        (
            {},
            MultiMatch("a", ("title", "body")),
            "flat_scan",
            (
                "not IndexedSearch: title: no index; body: no index",
                "not HybridResidualSearch: title: no index to extend with a tail; "
                "body: no index to extend with a tail",
            ),
        ),
    ],
)
def test_choice_and_reason(index, query, choice, reasons):
    req = decide(request(make_db(index), query))
    assert (req.choice, req.reasons) == (choice, reasons)


def test_an_unindexed_tail_sends_the_search_to_the_hybrid_plan():
    db = make_db()
    db.table("docs").build_segment("body", (0, 4))  # row 5 is a tail no segment holds
    db.table("docs").insert(  # fresh rows are indexed in memory: not part of the tail
        pa.table({"id": pa.array([6], pa.int64()), "title": ["x"], "body": ["alpha"]})
    )
    req = decide(request(db, Match("body", "alpha")))
    assert (req.choice, req.reasons) == ("hybrid", ("not IndexedSearch: body: index covers rows ..4 of ..6",))
    req = decide(request(db, Match("body", "alpha"), residual_row_limit=0))
    assert req.choice == "flat_scan"
    assert req.reasons[-1] == "not HybridResidualSearch: unindexed tail of 1 rows exceeds fts.residual_row_limit = 0"
    db.table("docs").optimize()
    assert decide(request(db, Match("body", "alpha"))).choice == "indexed"


def test_a_choice_is_made_once_per_snapshot_and_again_when_the_table_changes():
    """The snapshot (and the choice memoized on it) is shared by the queries of one table
    version; a write makes a new snapshot, and every setting the choice reads is part of
    its key."""
    db = make_db({"body": {}})
    t = db.table("docs")
    snap = db.snapshot("docs")
    assert db.snapshot("docs") is snap
    assert decide(request(db, Match("body", "alpha"))).choice == "indexed"
    assert decide(request(db, Match("body", "alpha"), force_plan="flat_scan")).choice == "flat_scan"
    assert decide(request(db, Phrase("body", "alpha beta"))).choice == "flat_scan"  # no positions
    assert decide(request(db, Match("body", "alpha"))).choice == "indexed"
    t.build_segment("title", (0, 2))  # title: indexed up to row 2 of 5
    assert db.snapshot("docs") is not snap
    assert decide(request(db, Match("title", "alpha"))).choice == "hybrid"
    assert decide(request(db, Match("title", "alpha"), residual_row_limit=2)).choice == "flat_scan"
    t.insert(pa.table({"id": pa.array([6], pa.int64()), "title": ["x"], "body": ["alpha"]}))
    snap = db.snapshot("docs")
    assert snap.row_count == 7 and decide(request(db, Match("body", "alpha"))).choice == "indexed"
    t.delete("id = 6")
    assert db.snapshot("docs") is not snap
    assert sorted(t.search(Match("body", "alpha"), limit=None, columns=[])["_rowid"].to_pylist()) == [0, 2, 4]


def test_the_decisions_are_kept_per_query_shape_not_per_text():
    """A memoized decision serves queries differing only in their texts; anything the rules
    read (a leaf's kind or column, a setting) makes a new one."""
    db = make_db({"body": {}})
    assert decide(request(db, Match("body", "alpha"))).choice == "indexed"
    assert decide(request(db, Match("body", "beta gamma"))).choice == "indexed"
    assert decide(request(db, Phrase("body", "alpha beta"))).choice == "flat_scan"  # no positions
    assert decide(request(db, Match("title", "alpha"))).choice == "flat_scan"
    both = Boolean(must=(Match("body", "alpha"),), should=(Match("title", "beta"),))
    assert decide(request(db, both)).columns == ("body", "title")
    assert decide(request(db, Boolean(must=(Match("body", "x"),), should=(Match("body", "y"),)))).columns == ("body",)
    with pytest.raises(CatalogError):
        decide(request(db, Match("nosuch", "alpha")))
    memo = db.snapshot("docs").memo[("rules",)]
    assert len(memo) == 5  # alpha and "beta gamma" share one; the error is not kept


def test_forced_flat_scan_is_always_possible():
    req = decide(request(make_db({"body": {}}), Match("body", "alpha"), force_plan="flat_scan"))
    assert (req.choice, req.reasons) == ("flat_scan", ("forced",))


def test_forced_indexed_when_possible():
    req = decide(request(make_db({"body": {}}), Match("body", "alpha"), force_plan="indexed"))
    assert (req.choice, req.reasons) == ("indexed", ("forced",))


@pytest.mark.parametrize(
    "index, query, force, gap",
    [
        ({}, Match("body", "alpha"), "indexed", "body: no index"),
        ({"body": {}}, Phrase("body", "a b"), "indexed", "no positions"),
        ({}, Match("body", "alpha"), "hybrid", "no index to extend"),
    ],
)
def test_impossible_forced_plan_is_a_plan_error_that_says_why(index, query, force, gap):
    with pytest.raises(PlanError) as info:
        decide(request(make_db(index), query, force_plan=force))
    assert gap in str(info.value)
    assert force in str(info.value)


# ---------------------------------------------------------------------------- plan_search


@pytest.mark.parametrize("index", [{}, {"body": {"positions": True}, "title": {"positions": True}}])
@pytest.mark.parametrize(
    "query",
    [
        Match("body", "alpha beta"),
        Phrase("body", "alpha beta"),
        Boolean(must=(Match("title", "alpha"),), must_not=(Match("body", "delta"),)),
        MultiMatch("alpha", ("title", "body")),
        Prefix("body", "al"),
    ],
)
@pytest.mark.parametrize("k, offset", [(None, 0), (2, 0), (2, 1), (10, 3)])
def test_physical_plan_is_a_global_top_k_over_one_operator_and_matches_the_reference(
    index, query, k, offset
):
    db = make_db(index)
    plan, req = plan_search(request(db, query, k=k, offset=offset), db)
    limit = "all" if k is None else str(k)
    assert plan.display() == f"GlobalTopK: k={limit}, offset={offset}, inputs=1"
    (operator,) = plan.children()
    expected_operator = "IndexedSearch" if req.choice == "indexed" else "FlatScanSearch"
    assert operator.display().startswith(expected_operator + ": table=docs, ")
    # The operator is asked for the rows before the offset too.
    inner = "all" if k is None else str(k + offset)
    assert f"k={inner}" in operator.display()
    result = pa.Table.from_batches(list(plan.execute()), schema=plan.schema)
    got = list(zip(result.column(0).to_pylist(), map(repr, result.column(1).to_pylist())))
    assert got == [(r, repr(s)) for r, s in ref_search(REF, query, k, offset)]


def test_flat_scan_display_carries_the_reason():
    db = make_db({"body": {}})
    plan, _ = plan_search(request(db, Phrase("body", "alpha beta"), k=3), db)
    (operator,) = plan.children()
    assert operator.display() == (
        "FlatScanSearch: table=docs, columns=['body'], k=3, "
        "reason=not IndexedSearch: body: phrase query but the index has no positions; "
        "not HybridResidualSearch: body: phrase query but the index has no positions, "
        "advice: CREATE FULLTEXT INDEX ON docs (body) WITH (positions = true) would let MATCH on body use an index"
    )


def test_include_row_ids_reach_the_operator():
    import numpy as np

    db = make_db({"body": {}})
    include = np.array([0, 4], dtype=np.int64)
    for force in ("auto", "flat_scan"):
        plan, _ = plan_search(
            request(db, Match("body", "alpha"), k=5, include=include, force_plan=force),
            db,
        )
        result = pa.Table.from_batches(list(plan.execute()), schema=plan.schema)
        expected = ref_search(REF, Match("body", "alpha"), 5, 0, [0, 4])
        assert list(zip(result.column(0).to_pylist(), result.column(1).to_pylist())) == expected
