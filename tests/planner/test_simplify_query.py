"""simplify_query (issue 17): each rewrite, and that the simplified tree gives the rows and
float64 score bits of the tree as written, by the brute-force reference and by every plan
(docs/design.md: "Order, top-k and paging"; "Compound queries")."""

from __future__ import annotations

import dataclasses
import struct

import pyarrow as pa
import pytest
from engine_tables import engine_table
from hypothesis import given
from hypothesis import strategies as st
from reference import RefTable, ref_search
from strategies import corpora, leaf_queries, search_params, table_columns, table_words, QUERY_WORDS

import datafusion_fts as fts
from datafusion_fts.planner import plan_search
from datafusion_fts.planner.simplify_query import simplify_query
from datafusion_fts.query import Boolean, Boost, Match, MultiMatch, Phrase, Prefix, leaves


def m(text: str, boost: float = 1.0, column: str = "body") -> Match:
    return Match(column, text, boost=boost)


A, B, C, D = m("a"), m("b"), m("c"), m("d")


# -- each rewrite ---------------------------------------------------------------------------
@pytest.mark.parametrize(("tree", "simplest"), [
    # one scoring clause, no MUST_NOT: the clause
    (Boolean(must=[A]), A),
    (Boolean(should=[A]), A),
    (Boolean(must=[m("a b")]), m("a b")),
    (Boolean(must=[Boolean(should=[Boolean(must=[A])])]), A),
    (Boolean(must=[m("a", 0.0)]), m("a", 0.0)),  # +0.0: 0.0 + 0.0 is +0.0
    (Boolean(must=[Phrase("body", "a b", boost=2.0)]), Phrase("body", "a b", boost=2.0)),
    (Boolean(must=[Boost(A, B, 0.5)]), Boost(A, B, 0.5)),
    (Boolean(should=[Boolean(must=[A, B])]), Boolean(must=[A, B])),
    # ... a clause whose score may be -0.0 keeps its Boolean at the root (0.0 + -0.0 is +0.0)
    # and under a Boost, whose scores are not summed
    (Boost(Boolean(must=[m("a", -0.0)]), Boolean(must=[B]), 0.5), Boost(Boolean(must=[m("a", -0.0)]), B, 0.5)),
    (Boost(Boolean(must=[A]), Boolean(should=[B]), 0.5), Boost(A, B, 0.5)),
    # ... but in a sum the sign of a zero is not seen
    (Boolean(must=[Boolean(must=[m("a", -0.0)]), B]), Boolean(must=[m("a", -0.0), B])),
    (Boolean(should=[A, Boolean(should=[m("b", -1.0)])]), Boolean(should=[A, m("b", -1.0)])),
    (Boolean(must=[A], must_not=[Boolean(must=[m("b", -0.0)])]), Boolean(must=[A], must_not=[m("b", -0.0)])),
    # one scoring clause beside MUST_NOT, a Boolean: the exclusions added to its own
    (Boolean(must=[Boolean(must=[A, B], must_not=[C])], must_not=[D]), Boolean(must=[A, B], must_not=[C, D])),
    (Boolean(should=[Boolean(should=[A, B])], must_not=[C]), Boolean(should=[A, B], must_not=[C])),
    (Boolean(must=[Boolean(must_not=[A])], must_not=[B]), Boolean(must_not=[A, B])),
    (Boolean(must=[Boolean(must=[A], should=[B])]), Boolean(must=[A], should=[B])),
    # the first MUST clause, a conjunction, spliced (with its exclusions)
    (Boolean(must=[Boolean(must=[A, B]), C]), Boolean(must=[A, B, C])),
    (Boolean(must=[Boolean(must=[A, B], must_not=[D]), C], should=[m("e")]),
     Boolean(must=[A, B, C], should=[m("e")], must_not=[D])),
    (Boolean(must=[Boolean(should=[A], must_not=[D]), C]), Boolean(must=[A, C], must_not=[D])),
    # with no MUST, the first SHOULD clause, a disjunction, spliced
    (Boolean(should=[Boolean(should=[A, B]), C]), Boolean(should=[A, B, C])),
    (Boolean(should=[MultiMatch("a", ("title", "body")), C]), Boolean(should=[m("a", column="title"), A, C])),
    # a disjunction excluded: each of its clauses excluded
    (Boolean(should=[A], must_not=[Boolean(should=[B, Boolean(should=[C, D])])]), Boolean(should=[A], must_not=[B, C, D])),
    (Boolean(must=[Boolean(should=[A])], must_not=[Boolean(should=[B, C])]), Boolean(must=[A], must_not=[B, C])),
    (Boolean(must_not=[MultiMatch("b", ("title", "body"))]), Boolean(must_not=[m("b", column="title"), B])),
    # a MultiMatch of one column: its Match
    (MultiMatch("a", ("body",)), A),
    (MultiMatch("a", ("body",), (2.0,), operator="and"), Match("body", "a", operator="and", boost=2.0)),
    (MultiMatch("a", ("body",), (-0.0,)), Boolean(should=[m("a", -0.0)])),
    (Boolean(must=[MultiMatch("a", ("body",))], must_not=[B]), Boolean(must=[A], must_not=[B])),
])
def test_each_rewrite(tree, simplest):
    assert simplify_query(tree) == simplest
    assert simplify_query(simplest) == simplest


@pytest.mark.parametrize("tree", [
    A,
    Boolean(must=[A, B]),
    Boolean(should=[A], must_not=[B]),
    Boolean(must=[A], must_not=[B]),  # (the kernels answer it as they answer A)
    # a clause whose score may be -0.0 keeps its Boolean at the root: 0.0 + -0.0 is +0.0
    Boolean(must=[m("a", -0.0)]),
    Boolean(must=[m("a b", -2.0)]),
    Boolean(should=[Boost(m("a", -1.0), B, 0.5)]),
    Boolean(must_not=[A]),  # every live row but A's, score 0 (docs/design.md: "Compound queries")
    Boolean(),
    # not the first clause: b + (0.0 + c + d) is not b + c + d in floating point
    Boolean(must=[A, Boolean(must=[B, C])]),
    Boolean(should=[A, Boolean(should=[B, C])]),
    # a MUST beside: the nested SHOULDs' sum is added to it as one number
    Boolean(must=[A], should=[Boolean(should=[B, C])]),
    # a disjunction with exclusions of its own excludes them from its clauses only
    Boolean(should=[Boolean(should=[A, D], must_not=[C]), B]),
    # a conjunction of MUST and SHOULD: its SHOULD sum comes after the outer MUST clauses
    Boolean(must=[Boolean(must=[A], should=[B]), C]),
    # the MUST_NOT of a MUST_NOT is the rows that match, not a union
    Boolean(should=[A], must_not=[Boolean(must_not=[B])]),
    Boolean(should=[A], must_not=[Boolean(must=[B, C])]),
    Boost(A, B, 0.0),  # pos - 0.0 * neg is not pos when neg is infinite (folding boosts is never done)
    MultiMatch("a", ("title", "body")),
])
def test_trees_without_a_rewrite_are_returned_as_they_are(tree):
    assert simplify_query(tree) is tree


# -- exactness on a table ---------------------------------------------------------------------
BODIES = ["a b", "b c", "a a d", None, "c a b", "d", "a c", "b b b", "", "a"]
TITLES = ["x", "y", "a", "b", None, "a b", "c", "d", "a", "x y"]
REF = RefTable(rows={i: {"title": t, "body": b} for i, (t, b) in enumerate(zip(TITLES, BODIES))}, deleted={5})
PLANS = ("indexed", "hybrid", "flat_scan")


def bits(hits: list[tuple[int, float]]) -> list[tuple[int, bytes]]:
    """Rows and the exact bits of their scores (-0.0 and +0.0 differ, NaN payloads too)."""
    return [(r, struct.pack("<d", s)) for r, s in hits]


def tables(ref: RefTable, cut: int = 3) -> dict[str, fts.Table]:
    """A table per forced plan: indexed and flat_scan share a fully indexed one; hybrid has
    an unindexed tail (and fresh rows, see engine_table)."""
    indexed = engine_table(ref, "indexed")
    return {"indexed": indexed, "flat_scan": indexed, "hybrid": engine_table(ref, "hybrid", [cut])}


def searched(t: fts.Table, plan: str, query, limit=None, offset=0, include_row_ids=None) -> list[tuple[int, float]]:
    t.db.settings.set("fts.force_plan", plan)
    try:
        r = t.search(query, limit=limit, offset=offset, include_row_ids=include_row_ids, columns=[])
    finally:
        t.db.settings.set("fts.force_plan", "auto")
    return list(zip(r.column("_rowid").to_pylist(), r.column("_score").to_pylist()))


@pytest.fixture()
def unsimplified(monkeypatch):
    """Plans run the tree as written (the rule off) inside this context."""

    def without_rule() -> None:
        monkeypatch.setattr(plan_search, "simplify_query", lambda query: query)

    return without_rule


@pytest.fixture(scope="module")
def ref_tables() -> dict[str, fts.Table]:
    return tables(REF)


SIGNED_CASES = [
    Boolean(must=[m("a", -0.0)]),
    Boolean(must=[m("a", 0.0)]),
    Boolean(should=[m("a b", -1.5)]),
    Boolean(must=[m("a", -0.0)], must_not=[m("d")]),
    Boolean(must=[Boolean(must=[m("a", -0.0)]), m("b", -0.0)]),
    Boolean(should=[Boolean(should=[m("a", -0.0), m("c", 0.0)]), m("b", -2.0)]),
    Boolean(must=[Boost(m("a", -0.0), B, 0.5)]),
    Boost(Boolean(must=[m("a", -0.0)]), Boolean(should=[m("b", -0.0)]), -0.0),
    Boost(Boolean(should=[m("a", 0.0)]), B, 0.0),
    MultiMatch("a", ("body",), (-0.0,)),
    Boolean(must=[Boolean(must_not=[A])], must_not=[B]),  # MUST_NOT only: every live row, score 0
    Boolean(should=[Boolean(must_not=[A, C])]),
    Boolean(must_not=[Boolean(should=[A, Boolean(must=[C])])]),
    Boolean(must=[Boolean(must=[A, m("b", -1.0)], must_not=[D]), m("c", 0.0)], should=[m("d", -0.0)]),
    Boolean(must=[m("a b"), Boolean(must=[Prefix("body", "", boost=-0.0)])]),
    Boolean(must=[MultiMatch("a b", ("title", "body"), (-0.0, 2.0))]),
    Boolean(should=[Phrase("body", "a b", boost=-0.0)], must_not=[Boolean(should=[MultiMatch("c", ("title", "body"))])]),
]


@pytest.mark.parametrize("query", SIGNED_CASES)
def test_zero_signs_negative_boosts_and_must_not_only_keep_every_bit(query, ref_tables, unsimplified):
    expected = bits(ref_search(REF, query))
    assert expected and bits(ref_search(REF, simplify_query(query))) == expected
    for plan in PLANS:
        assert bits(searched(ref_tables[plan], plan, query)) == expected, plan
        assert bits(searched(ref_tables[plan], plan, query, limit=3, offset=1)) == expected[1:4], plan
    unsimplified()
    for plan in PLANS:
        assert bits(searched(ref_tables[plan], plan, query)) == expected, plan


C1 = m("c", 0.1)  # (boosts where a wrong order of additions shows in the score bits of REF)
NEAR_MISSES = [  # (a tree no rewrite may change, the tempting wrong rewrite)
    (Boolean(must=[A, Boolean(must=[B, C1])]), Boolean(must=[A, B, C1])),
    (Boolean(should=[A, Boolean(should=[B, C1])]), Boolean(should=[A, B, C1])),
    (Boolean(must=[A], should=[Boolean(should=[B, C1])]), Boolean(must=[A], should=[B, C1])),
    (Boolean(must=[Boolean(must=[A], should=[B]), C1]), Boolean(must=[A, C1], should=[B])),
    (Boolean(should=[Boolean(should=[A, D], must_not=[C]), B]), Boolean(should=[A, D, B], must_not=[C])),
    (Boolean(should=[A], must_not=[Boolean(must_not=[B])]), Boolean(should=[A], must_not=[B])),
    (Boolean(should=[A], must_not=[Boolean(must=[B, C])]), Boolean(should=[A], must_not=[B, C])),
    (Boolean(must=[m("a", -0.0)]), m("a", -0.0)),
    (Boost(Boolean(must=[m("a", -0.0)]), B, 0.5), Boost(m("a", -0.0), B, 0.5)),
]


@pytest.mark.parametrize(("tree", "wrong"), NEAR_MISSES)
def test_near_misses_keep_their_bits(tree, wrong, ref_tables):
    expected = bits(ref_search(REF, tree))
    assert bits(ref_search(REF, wrong)) != expected  # (the wrong rewrite would show)
    assert simplify_query(tree) != wrong
    for plan in PLANS:
        assert bits(searched(ref_tables[plan], plan, tree)) == expected, plan


def test_negative_zero_scores_stay_negative_at_the_root(ref_tables):
    # A one-clause MUST of a -0.0-boosted leaf scores +0.0 (0.0 + -0.0); the leaf alone,
    # -0.0. The rule must keep the Boolean, and -0.0 ranks below +0.0 (docs/design.md: "Order, top-k
    # and paging").
    wrapped = searched(ref_tables["indexed"], "indexed", Boolean(must=[m("a", -0.0)]))
    bare = searched(ref_tables["indexed"], "indexed", m("a", -0.0))
    assert [r for r, _ in wrapped] == [r for r, _ in bare] and wrapped
    assert bits(wrapped) != bits(bare)
    assert all(struct.pack("<d", s) == struct.pack("<d", 0.0) for _, s in wrapped)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_nan_scores_keep_their_bits(ref_tables, unsimplified):
    # inf - 1.0 * inf is NaN: 0.0 + NaN returns that NaN, so unwrapping its Boolean is exact.
    infinite = Boolean(must=[m("a", 1.7e308)] * 8)
    huge = Boost(infinite, infinite, 1.0)
    query = Boolean(must=[Boolean(must=[huge]), m("c")], should=[Boolean(should=[huge])])
    expected = bits(ref_search(REF, query))
    assert any(s != s for _, s in ref_search(REF, query))
    for plan in PLANS:
        assert bits(searched(ref_tables[plan], plan, query)) == expected, plan
    unsimplified()
    for plan in PLANS:
        assert bits(searched(ref_tables[plan], plan, query)) == expected, plan


def test_sql_and_fts_search_get_the_rule(unsimplified):
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": BODIES}))
    t.create_index("body")

    def sql(where: str) -> list[tuple[int, float]]:
        out = db.sql(f"SELECT _rowid, score() AS s FROM docs WHERE {where} ORDER BY s DESC LIMIT 5").to_pydict()
        return list(zip(out["_rowid"], out["s"]))

    def udtf(q: str) -> list[tuple[int, float]]:
        out = db.sql(f"SELECT _rowid, _score FROM fts_search('docs', 'body', '{q}', 5)").to_pydict()
        return list(zip(out["_rowid"], out["_score"]))

    cases = [("MATCH(body, '+a')", "+a"), ("MATCH(body, 'a b') AND NOT MATCH(body, 'd OR c')", "+(a b) -(d c)")]
    before = [(sql(where), udtf(q)) for where, q in cases]
    unsimplified()
    assert [(sql(where), udtf(q)) for where, q in cases] == before
    expected = [ref_search(RefTable(rows={i: {"body": b} for i, b in enumerate(BODIES)}), query, limit=5)
                for query in (Boolean(must=[A]), Boolean(must=[m("a b")], must_not=[Boolean(should=[D, C])]))]
    assert [bits(s) for s, _ in before] == [bits(e) for e in expected]
    assert [bits(u) for _, u in before] == [bits(e) for e in expected]


@pytest.mark.parametrize("query", [
    Boolean(must=[A]),
    Boolean(must=[m("a b")]),
    Boolean(must=[Match("body", "a b", operator="and")]),
    Boolean(must=[m("a b")], must_not=[C]),
    Boolean(must=[Boolean(must=[A, B]), C]),
    Boolean(should=[Boolean(should=[A, B]), C]),
    Boolean(should=[A], must_not=[Boolean(should=[B, C])]),
    Boost(Boolean(must=[A]), B, 0.5),
    Boolean(must=[Boost(A, B, 0.5)]),
    MultiMatch("a b", ("body",)),
])
def test_simplified_shapes_reach_the_term_kernels(query, ref_tables):
    plan, request = ref_tables["indexed"].plan(query, limit=3)
    list(plan.execute())
    assert "postings_scored" in plan.children()[0].metrics.values, request.query


# -- properties: random corpora and trees ------------------------------------------------------
SIGNED_BOOSTS = (1.0, 2.0, 0.5, 0.0, -0.0, -1.0, -2.5)


def signed_leaves(columns, words) -> st.SearchStrategy:
    """strategies.leaf_queries with boosts of both signs and zeros of both signs."""

    @st.composite
    def leaf(draw):
        node = draw(leaf_queries(columns, words))
        if isinstance(node, MultiMatch):
            if node.boosts is None:
                return node
            return dataclasses.replace(node, boosts=tuple(draw(st.sampled_from(SIGNED_BOOSTS)) for _ in node.boosts))
        return dataclasses.replace(node, boost=draw(st.sampled_from(SIGNED_BOOSTS)))

    return leaf()


def shaped_trees(columns, words, depth: int = 3) -> st.SearchStrategy:
    """Trees rich in the shapes the rule rewrites: Booleans of one clause, nested
    Booleans, one scoring clause beside MUST_NOT clauses, Boosts, MUST_NOT-only Booleans."""
    leaf = signed_leaves(columns, words)
    if depth == 0:
        return leaf
    child = st.deferred(lambda: shaped_trees(columns, words, depth - 1))
    few = st.lists(child, min_size=0, max_size=2).map(tuple)
    return st.one_of(
        leaf,
        child.map(lambda c: Boolean(must=[c])),
        child.map(lambda c: Boolean(should=[c])),
        st.builds(lambda c, n: Boolean(must=[c], must_not=n), child, few),
        st.builds(lambda a, b, s, n: Boolean(must=(a, *b), should=s, must_not=n), child, few, few, few),
        st.builds(lambda a, b, n: Boolean(should=(a, *b), must_not=n), child, few, few),
        st.builds(lambda n: Boolean(must_not=n), few),
        st.builds(Boost, child, child, st.sampled_from((0.0, -0.0, 0.5, 1.0, -1.0))),
    )


@st.composite
def cases(draw):
    ref = draw(corpora(max_rows=25, params=True))
    columns = table_columns(ref) or ["title"]
    words = list(QUERY_WORDS) + table_words(ref) * 3
    return ref, draw(shaped_trees(columns, words)), draw(search_params(ref.rows)), draw(st.integers(0, 25))


@given(cases())
def test_the_simplified_tree_keeps_every_row_and_score_bit(case):
    """By the reference, and by every forced plan with the rule on (the simplified tree) and
    off (the tree as written)."""
    ref, query, params, cut = case
    simple = simplify_query(query)
    assert sorted(map(repr, leaves(simple))) == sorted(map(repr, leaves(query)))  # (every leaf kept)
    assert simplify_query(simple) == simple  # a fixpoint
    expected = bits(ref_search(ref, query, **params))
    assert bits(ref_search(ref, simple, **params)) == expected
    if params["limit"] == 0:
        return
    plans = tables(ref, cut)
    if not leaves(query):  # (a hybrid plan needs a column to extend with its tail)
        del plans["hybrid"]
    for plan, t in plans.items():
        assert bits(searched(t, plan, query, **params)) == expected, (plan, simple)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plan_search, "simplify_query", lambda q: q)
        for plan, t in plans.items():
            assert bits(searched(t, plan, query, **params)) == expected, (plan, "as written")
