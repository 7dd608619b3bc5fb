"""Prepared searches (a query shape's indexed plan kept per snapshot, run with each query's
words): they answer exactly as the plan does, and only where the plan is the indexed
kernels' (docs/design.md: "1. Purpose and invariants"; "The planner")."""

from __future__ import annotations

import pyarrow as pa
import pytest
from reference import RefTable, ref_search

import datafusion_fts as fts
from datafusion_fts.operators.base import SEARCH_SCHEMA
from datafusion_fts.planner.answer_search import Search, request_for
from datafusion_fts.planner.prepared_search import search_prepared
from datafusion_fts.query import Boolean, Boost, Match, MultiMatch, Phrase, Prefix

BODIES = ["a b", "b c", "a a d", None, "c a b", "d", "a c", "b b b"]
TITLES = ["x", "y", "a", "b", None, "a b", "c", "d"]
REF = RefTable(rows={i: {"title": t, "body": b} for i, (t, b) in enumerate(zip(TITLES, BODIES))})


@pytest.fixture()
def table() -> fts.Table:
    db = fts.connect()
    t = db.create_table("docs", pa.table({"title": TITLES, "body": BODIES}))
    t.create_index("body")
    t.create_index("title")
    return t


def prepared(t: fts.Table, query, **kwargs):
    return search_prepared(request_for(Search(query, kwargs.get("limit", 10), kwargs.get("offset", 0)), t.snapshot(), t.db.settings), t.db)


def planned(t: fts.Table, query, **kwargs) -> list[tuple[int, str]]:
    plan, _ = t.plan(query, **kwargs)
    r = pa.Table.from_batches(list(plan.execute()), schema=SEARCH_SCHEMA)
    return list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist())))


def searched(t: fts.Table, query, **kwargs) -> list[tuple[int, str]]:
    r = t.search(query, columns=[], **kwargs)
    return list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist())))


def expected(query, **kwargs) -> list[tuple[int, str]]:
    return [(r, repr(s)) for r, s in ref_search(REF, query, **kwargs)]


@pytest.mark.parametrize("query", [
    Match("body", "a b"),
    Match("body", "a b", operator="and"),
    Match("body", "b", boost=-0.0),
    Match("body", "b", boost=0.0),
    Boolean(must=(Match("body", "a"),), must_not=(Match("body", "d c"),)),
    Boolean(should=(Match("body", "a", boost=2.0), Match("body", "c"))),
    Boost(Match("body", "a"), Match("body", "b"), 0.5),
    MultiMatch("a", ("body",), (-0.0,)),
])
@pytest.mark.parametrize("offset", [0, 2])
def test_a_prepared_search_answers_as_the_plan(table, query, offset):
    assert prepared(table, query, limit=3, offset=offset) is not None
    assert searched(table, query, limit=3, offset=offset) == planned(table, query, limit=3, offset=offset)
    assert searched(table, query, limit=3, offset=offset) == expected(query, limit=3, offset=offset)


def test_a_zero_boost_keeps_its_sign_across_queries_of_one_shape(table):
    for boost in (0.0, -0.0, 0.0):
        scores = {s for _, s in searched(table, Match("body", "b", boost=boost))}
        assert scores == {repr(boost)}


@pytest.mark.parametrize("query", [
    Match("body", "a", fuzziness=1),
    Prefix("body", "a"),
    Phrase("body", "a b"),
    Boolean(must=(Match("body", "a"), Match("title", "a"))),  # two columns
])
def test_other_shapes_are_planned(table, query):
    assert prepared(table, query) is None
    assert searched(table, query, limit=5) == planned(table, query, limit=5)


def test_the_words_decide_whether_a_shape_is_prepared(table):
    """The kernels answer a MUST clause of one word; two words make another tree, which the
    plan's general evaluator answers. Both layouts of the one shape are kept."""
    one = Boolean(must=(Match("body", "a"),), should=(Match("body", "c"),))
    two = Boolean(must=(Match("body", "a b"),), should=(Match("body", "c"),))
    assert prepared(table, one) is not None
    assert prepared(table, two) is None
    for query in (one, two, one):
        assert searched(table, query) == expected(query, limit=10)
    (entry,) = table.snapshot().memo[("prepared",)].values()
    assert sorted(entry.layouts) == [(1, 1), (2, 1)]
    assert entry.layouts[(2, 1)] is None


def test_no_prepared_search_without_a_limit_or_off_the_indexed_plan(table):
    assert prepared(table, Match("body", "a"), limit=None) is None
    table.db.settings.set("fts.force_plan", "flat_scan")
    assert prepared(table, Match("body", "a")) is None
    assert searched(table, Match("body", "a")) == expected(Match("body", "a"), limit=10)


def test_a_new_snapshot_prepares_again(table):
    query = Match("body", "a")
    assert searched(table, query) == expected(query, limit=10)
    table.insert(pa.table({"title": ["z"], "body": ["a a a"]}))
    REF2 = RefTable(rows={**REF.rows, 8: {"title": "z", "body": "a a a"}})
    assert searched(table, query) == [(r, repr(s)) for r, s in ref_search(REF2, query, limit=10)]


def test_the_hybrid_plan_is_prepared_while_the_tail_cache_holds_the_tail():
    """Rows 5-7 are an unindexed tail: the hybrid plan's set is the same for every query
    of the snapshot only while the tail cache keeps the tail's index."""
    db = fts.connect()
    t = db.create_table("docs", pa.table({"title": TITLES, "body": BODIES}))
    t.build_segment("body", (0, 4))
    query = Match("body", "a b", operator="and")
    plan, req = t.plan(query, limit=10)
    assert req.choice == "hybrid"
    assert prepared(t, query) is not None
    assert prepared(t, Match("body", "c a")) is not None
    for q in (query, Match("body", "c a"), Boolean(must=(Match("body", "b"),), must_not=(Match("body", "c"),))):
        assert searched(t, q) == planned(t, q, limit=10) == expected(q, limit=10)
    db.settings.set("fts.tail_cache_entries", 0)
    assert prepared(t, query) is None
    assert searched(t, query) == expected(query, limit=10)


def test_a_lone_character_after_a_word_of_the_same_shape_is_planned():
    """A shape prepared with a word, asked again with one character of a script cut into
    bigrams: that character stands for every gram holding it, which only bind expands (the
    prepared search looked the character up as a term: no row; SQL's generated statements
    found it, issue 42)."""
    bodies = ["数据库 red", "red 据库", "blue 数据", "red"]
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": bodies}))
    t.create_index("body")
    ref = RefTable(rows={i: {"body": b} for i, b in enumerate(bodies)})
    word, char = (Boolean(must=(Match("body", w),), must_not=(Match("body", "blue"),)) for w in ("red", "数"))
    assert prepared(t, word) is not None and searched(t, word) == [(r, repr(s)) for r, s in ref_search(ref, word)]
    assert prepared(t, char) is None
    assert searched(t, char) == [(r, repr(s)) for r, s in ref_search(ref, char)] and len(searched(t, char)) == 1
