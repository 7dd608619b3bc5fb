"""Sloppy phrases in any order and phrase prefixes through every plan, SQL MATCH and the
fresh tier (issue 21; docs/design.md: "Compound queries"): the documented examples, and
the same rows and bit-identical scores as the reference."""

from __future__ import annotations

import pyarrow as pa
import pytest
from engine_tables import engine_table
from reference import RefTable, ref_search

import datafusion_fts as fts
from datafusion_fts.query import Phrase, parse

BODIES = [
    "a b c",  # 0
    "b a c",  # 1
    "b x a",  # 2
    "c b a",  # 3
    "big bad wolf",  # 4
    "big bad woman and a wolf",  # 5
    "bad big wolf",  # 6
    "big good wolf",  # 7
    "a a",  # 8
    "a",  # 9
]
REF = RefTable(rows={i: {"body": b} for i, b in enumerate(BODIES)}, columns=["body"])

# query -> matching rows (as a set: the order is the reference's, checked separately)
CASES = {
    '"a b"': {0},
    '"a b"~1': {0},
    '"a b"~2': {0, 1, 3},  # b a: a transposition costs 2
    '"a b"~3': {0, 1, 2, 3},  # b x a
    '"a b c"~4': {0, 1, 3},  # c b a: c two early, a two late
    '"a a"~5': {8},  # distinct positions: one "a" never matches "a a"
    '"big bad wo"*': {4, 5},
    '"big bad wo"*~2': {4, 5, 6},
    '"big wo"*': {6},
    '"big wo"*~1': {4, 5, 6, 7},
    '"wolf bi"*~2': {6},  # big wolf, in the other order
    '"wo"*': {4, 5, 6, 7},
    '"big bad zz"*': set(),
    '"b a"* OR "big bad"': {1, 3, 4, 5},
}
ORDERED = {
    Phrase("body", "a b", slop=2, in_order=True): {0},
    Phrase("body", "a b", slop=3, in_order=True): {0},
    Phrase("body", "b a", slop=1, in_order=True): {1, 2, 3},
    Phrase("body", "wolf bi", slop=2, in_order=True, prefix=True): set(),
    Phrase("body", "big wo", slop=1, in_order=True, prefix=True): {4, 5, 6, 7},
}
PLANS = ("indexed", "hybrid", "flat_scan")


def hits(t: fts.Table, query) -> list[tuple[int, str]]:
    got = t.search(query, limit=None, columns=[])
    return list(zip(got.column("_rowid").to_pylist(), map(repr, got.column("_score").to_pylist())))


def expected(query) -> list[tuple[int, str]]:
    tree = parse(query, "body") if isinstance(query, str) else query
    return [(r, repr(s)) for r, s in ref_search(REF, tree)]


@pytest.fixture(scope="module", params=["indexed", "hybrid", "fresh"])
def table(request) -> fts.Table:
    """The corpus indexed, half of it in an unindexed tail, or inserted after the index
    was built (the fresh tier)."""
    if request.param == "fresh":
        db = fts.connect()
        t = db.create_table("docs", pa.table({"body": BODIES[:3]}))
        t.create_index("body", positions=True)
        t.insert(pa.table({"body": BODIES[3:]}))
        return t
    return engine_table(REF, request.param, [5])


@pytest.mark.parametrize("plan", PLANS)
@pytest.mark.parametrize("query", list(CASES) + list(ORDERED), ids=str)
def test_every_plan_matches_the_examples_and_the_reference(table, plan, query):
    want = expected(query)
    assert {r for r, _ in want} == (CASES[query] if isinstance(query, str) else ORDERED[query])
    table.db.settings.set("fts.force_plan", plan)
    try:
        got = hits(table, query)
    except fts.PlanError:
        assert plan == "indexed"  # (the hybrid table has a tail)
        return
    finally:
        table.db.settings.set("fts.force_plan", "auto")
    assert got == want


def test_sql_match_takes_phrase_prefixes_and_sloppy_phrases():
    t = engine_table(REF, "indexed")
    sql = "SELECT _rowid, score() AS s FROM docs WHERE MATCH(body, {q}) ORDER BY s DESC, _rowid"
    for query in ('"big bad wo"*', '"a b"~2', '"big wo"*~1^2'):
        got = [(r["_rowid"], repr(r["s"])) for r in t.db.sql(sql.format(q="'" + query + "'")).to_pylist()]
        assert got == expected(query)


def test_slop_zero_is_the_exact_phrase_in_either_form():
    t = engine_table(REF, "indexed")
    for text in ("a b", "a a", "big bad wolf"):
        exact = hits(t, Phrase("body", text))
        assert hits(t, Phrase("body", text, in_order=True)) == exact
        assert exact == expected(Phrase("body", text, in_order=True))


def test_without_positions_a_phrase_prefix_is_scanned_as_phrases_are():
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": BODIES}))
    t.create_index("body")
    for query in ('"big bad wo"*', '"a b"~2'):
        plan, request = t.plan(query, limit=5)
        assert request.choice == "flat_scan"
        assert "body: phrase query but the index has no positions" in " ".join(request.reasons)
        assert hits(t, query) == expected(query)
    db.settings.set("fts.force_plan", "indexed")
    with pytest.raises(fts.PlanError, match="phrase query but the index has no positions"):
        t.search('"big bad wo"*')

