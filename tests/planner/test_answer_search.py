"""planner/answer_search.py: one search as every door asks it. Every way it answers a
part (the page with a total from the index's statistics or from every match ranked once,
the matches unscored, a count, counts by a column) gives what the general plan gives
(``explained``: every match planned anew and ranked), on every tier, with prefilters; a
search page is its search, its count and its facets, read from one snapshot; a table of
the session is answered as a database's table without an index; bad arguments raise
before anything runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import TIERS, WORDS, table_on, tables

import datafusion_fts as fts
from datafusion_fts.errors import InvalidArgument
from datafusion_fts.operators.grouped_counts import GroupedCounts
from datafusion_fts.planner import answer_search
from datafusion_fts.planner.answer_search import Answer, Search, answer
from datafusion_fts.storage.sources.foreign import ForeignTable

QUERIES = WORDS + ("alpha beta", "+alpha -gamma", '"alpha beta"', "alph*", "nothing")


def _db(tmp_path_factory, store: str) -> fts.Database:
    return fts.connect(tmp_path_factory.mktemp("db") if store == "directory" else None)


@settings(max_examples=120, deadline=None)
@given(tables(), st.sampled_from(TIERS), st.sampled_from(["memory", "directory"]), st.sampled_from(QUERIES),
       st.none() | st.integers(1, 6), st.integers(0, 4), st.none() | st.sets(st.integers(0, 60), max_size=30))
def test_every_way_to_answer_a_search_is_the_general_plan_s(tmp_path_factory, table, tiers, store, query, limit,
                                                            offset, include):
    """The page beside a total (counted from the index's statistics, or every match ranked
    once, then cut), the page alone, a count, and every match unscored in row-id order,
    against every match planned anew (``explained``) and ranked."""
    db = _db(tmp_path_factory, store)
    t = table_on(db, table, tiers)
    snap, include = t.snapshot(), None if include is None else sorted(include)

    def asked(**wants) -> Answer:
        return answer(Search(query, include_row_ids=include, **wants), snap, db, db.settings)

    general = asked(limit=None, explained=True)
    assert general.plan is not None and general.request is not None and general.ranked
    ids, scores = general.rows.column(0).to_numpy(), general.rows.column(1).to_numpy()
    end = None if limit is None else offset + limit
    page = general.rows.slice(offset, None if end is None else limit)
    for wants in ({}, {"total": True}, {"total": True, "explained": True}):
        found = asked(limit=limit, offset=offset, **wants)
        assert found.rows.equals(page), wants
        assert found.total == (len(ids) if wants else None) and found.ranked
    assert asked(rows=False, total=True).total == len(ids)
    unscored = asked(limit=None, by_score=False, scored=False)
    assert not unscored.ranked and unscored.rows.column(0).to_pylist() == sorted(ids.tolist())
    in_row_order = asked(limit=None, by_score=False)
    assert not in_row_order.ranked
    order = np.argsort(ids, kind="stable")
    assert in_row_order.rows.column(0).to_pylist() == ids[order].tolist()
    assert in_row_order.rows.column(1).to_numpy().tobytes() == scores[order].tobytes()  # (the same bits)


@settings(max_examples=80, deadline=None)
@given(tables(), st.sampled_from(TIERS), st.sampled_from(QUERIES), st.integers(1, 5), st.integers(0, 3),
       st.none() | st.sets(st.integers(0, 60), max_size=30))
def test_a_search_page_is_its_search_its_count_and_its_facets(tmp_path_factory, table, tiers, query, limit, offset,
                                                              include):
    """``Table.search_page``: the rows of ``search``, the total of ``count`` and the counts
    of ``facets`` for each column, asked as one search."""
    db = _db(tmp_path_factory, "directory")
    t = table_on(db, table, tiers)
    include = None if include is None else sorted(include)
    page = t.search_page(query, limit, offset, columns=["cat"], facets=("cat", "year"), facet_limit=2,
                         include_row_ids=include)
    assert page.rows.equals(t.search(query, limit, offset, include_row_ids=include, columns=["cat"]))
    assert page.total == t.count(query, include_row_ids=include)
    assert page.total == t.search(query, limit=None, include_row_ids=include, columns=[]).num_rows
    assert list(page.facets) == ["cat", "year"]
    for column, counted in page.facets.items():
        assert counted.equals(t.facets(query, column, limit=2, include_row_ids=include))


def test_counts_by_a_column_and_a_page_share_the_matches_found_once() -> None:
    """A total found by ranking every match (a query of several terms) and counts by a
    column that the postings cannot give (an AND) are answered from the same matches,
    found once, as they are asked apart."""
    db = fts.connect()
    body = [("alpha beta" if i % 2 else "alpha gamma") + (" delta" if i % 3 == 0 else "") for i in range(60)]
    t = db.create_table("docs", pa.table({"body": body, "cat": [f"c{i % 4}" for i in range(60)]}))
    t.create_index("body")
    query = "+alpha +delta"
    facet = GroupedCounts.facets("cat", None)
    found = t.run(Search(query, limit=3, total=True, groups=(facet, facet)))
    assert found.total == t.count(query) == 20
    assert found.rows.equals(t.search(query, limit=3, columns=[]))
    assert found.groups[0].equals(found.groups[1]) and found.groups[0].equals(t.facets(query, "cat", limit=None))
    assert sum(found.groups[0].column("_count").to_pylist()) == 20


def test_a_table_of_the_session_is_answered_as_a_database_table_without_an_index() -> None:
    """A table of the session (scanned, rows numbered by scan position) answers every part
    a database's table without an index answers, with the same bits; counts by a column
    are a database table's only, refused with a clear error."""
    db = fts.connect()
    rows = pa.table({"body": [f"alpha {'beta ' * (i % 5)}gamma{i % 3}" for i in range(50)]})
    managed = db.create_table("docs", rows)
    db.ctx.from_arrow(rows, name="plain")
    plain = ForeignTable(db.ctx, "plain")
    for query in ("beta", "alpha beta", "+beta -gamma1", '"beta gamma2"'):
        for wants in ({"limit": 4, "offset": 2}, {"limit": 3, "total": True}, {"limit": None},
                      {"rows": False, "total": True}):
            theirs = answer(Search(query, **wants), plain, None, db.settings)
            ours = managed.run(Search(query, **wants))
            assert theirs.rows.equals(ours.rows) and theirs.total == ours.total, (query, wants)
    with pytest.raises(InvalidArgument, match="database's tables"):
        answer(Search("beta", groups=(GroupedCounts.facets("body", 3),)), plain, None, db.settings)


@pytest.mark.parametrize("wants, message", [
    ({"query": None}, "query must not be None"),
    ({"query": 3}, "query must be a query tree or a string"),
    ({"limit": 0}, "limit must be a positive integer"),
    ({"limit": True}, "limit must be a positive integer"),
    ({"offset": -1}, "offset must be a non-negative integer"),
    ({"limit": 2**62, "offset": 2**62}, "limit plus offset at most"),
    ({"include_row_ids": [1.5]}, "include_row_ids must be integers"),
    ({"query": "alpha AND ("}, r"unbalanced '\('.* at 1:11"),
])
def test_bad_arguments_raise_before_anything_runs(wants, message) -> None:
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": ["alpha beta"]}))
    t.create_index("body")
    asked = {"query": "alpha", **wants}
    with pytest.raises(fts.FtsError, match=message):
        t.run(Search(**asked))


@pytest.mark.parametrize("query", ["alpha", "alpha beta"])
def test_a_search_page_reads_one_version_while_a_writer_inserts(query, monkeypatch) -> None:
    """DESIGN §5.5: a search's parts read one visibility cut. A row inserted while the page
    is found (after the snapshot is taken, before the total and the facets are counted)
    is in none of them: the total and the facets are those of the version the rows came
    from, and the next search sees the row."""
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": ["alpha beta", "alpha", "beta", "alpha gamma"],
                                          "cat": ["x", "y", "x", "y"]}))
    t.create_index("body")
    before = t.count(query)
    real = answer_search.run_search
    inserted = []

    def racing(*args, **kwargs):
        if not inserted:
            inserted.append(t.insert(pa.table({"body": ["alpha beta alpha"], "cat": ["z"]})))
        return real(*args, **kwargs)

    monkeypatch.setattr(answer_search, "run_search", racing)
    page = t.search_page(query, limit=10, facets=["cat"], facet_limit=None)
    assert inserted and page.total == before
    assert sum(page.facets["cat"].column("_count").to_pylist()) == before
    assert "z" not in page.facets["cat"].column("cat").to_pylist()
    assert page.rows.num_rows == before and max(page.rows.column("_rowid").to_pylist()) < 4
    assert t.count(query) == before + 1
