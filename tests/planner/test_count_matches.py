"""Counting a search's matches and finding them unscored (planner/count_matches.py): from
the index's document frequencies and postings where a query binds to one term on a fully
indexed table, else by finding the matches; both the number and the rows ``find`` returns,
on every tier (indexed segments, deletions inside them, an unindexed tail, fresh rows) and
with prefilters."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
from engine_tables import engine_table
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import ref_search
from strategies import corpora, corpus_and_query, table_words, values
from whole_columns import whole_columns

import datafusion_fts as fts
from datafusion_fts.planner import count_matches
from datafusion_fts.planner.answer_search import Search, request_for
from datafusion_fts.planner.count_matches import counted_from_statistics
from datafusion_fts.planner.run_search import run_search
from datafusion_fts.query import Match, Prefix
from datafusion_fts.query.bound import BoundTerms


def _table(ref, tiers: str, more: list[dict]) -> fts.Table:
    """The corpus as a managed table indexed on its columns; with ``tiers``: "deleted"
    (its deleted rows deleted after the build), "tail" (``more`` rows bulk-inserted after
    the build: unindexed), "fresh" (``more`` inserted as fresh rows), "optimized"."""
    columns = ref.columns or ["title"]
    rows = [ref.rows[i] for i in sorted(ref.rows)]
    db = fts.connect()
    t = db.create_table("docs", pa.table({c: pa.array([r.get(c) for r in rows], pa.string()) for c in columns}))
    for c in columns:
        t.create_index(c)
    if ref.deleted:
        t.delete_rows(np.array(sorted(ref.deleted), dtype=np.int64))
    if more and tiers in ("tail", "fresh"):
        t.insert(pa.table({c: pa.array([r.get(c) for r in more], pa.string()) for c in columns}))
    if tiers == "optimized":
        t.optimize()
    return t


@settings(max_examples=150, deadline=None)
@given(corpus_and_query(max_rows=30), st.sampled_from(["deleted", "tail", "fresh", "optimized"]),
       st.lists(st.fixed_dictionaries({"title": values(), "body": values(), "tags": values()}), max_size=8),
       st.data())
def test_a_count_is_the_number_of_matches_find_returns(case, tiers, more, data):
    ref, query = case
    t = _table(ref, tiers, more)
    assert t.count(query) == t.find(query, limit=None)[0].num_rows
    _same_rows(t, query, None)
    include = data.draw(st.lists(st.integers(0, 40), max_size=10))
    assert t.count(query, include_row_ids=include) == t.find(query, limit=None, include_row_ids=include)[0].num_rows
    _same_rows(t, query, include)


def _same_rows(t: fts.Table, query, include: list[int] | None) -> None:
    """``matching_rows`` gives the ids ``find`` returns, ascending."""
    found = t.find(query, limit=None, include_row_ids=include)[0].column(0).to_numpy()
    rows = t.matching_rows(query, include)[0]
    assert rows.dtype == np.int64 and rows.tolist() == sorted(found.tolist())


@settings(max_examples=150, deadline=None)
@given(corpora(max_rows=30), st.sampled_from(["deleted", "tail", "fresh", "optimized"]),
       st.lists(st.fixed_dictionaries({"title": values(), "body": values(), "tags": values()}), max_size=8),
       st.data())
def test_a_one_word_count_is_the_number_of_matches_find_returns(ref, tiers, more, data):
    """Words of the table itself, one at a time: the queries the statistics answer."""
    t = _table(ref, tiers, more)
    column = data.draw(st.sampled_from(ref.columns or ["title"]))
    query = Match(column, data.draw(st.sampled_from(table_words(ref) or ["a"])))
    assert t.count(query) == t.find(query, limit=None)[0].num_rows
    _same_rows(t, query, None)
    _same_rows(t, query, data.draw(st.lists(st.integers(0, 40), max_size=10)))


@pytest.mark.parametrize("query", [Match("body", "alpha"), Match("body", "ALPHA beta gamma zeta", operator="and"),
                                   Match("body", "zzz"), Prefix("body", "alph"), Match("body", "alpah", fuzziness=1)])
def test_one_term_on_a_fully_indexed_table_is_counted_from_document_frequencies(query) -> None:
    body = [f"alpha row {i}" if i % 3 else f"beta {i}" for i in range(300)]
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": body}))
    t.create_index("body")
    t.delete_rows(np.arange(0, 300, 7, dtype=np.int64))  # (deletions inside the segment)
    request = request_for(Search(query, None, by_score=False), t.snapshot(), t.db.settings)
    counted = counted_from_statistics(request, db)
    found = t.find(query, limit=None)[0].num_rows
    if isinstance(query, Match) and query.text in ("alpha", "zzz"):
        assert counted is not None
    if isinstance(query, Match) and query.operator == "and":
        assert counted is None  # (four terms: found by the search)
    assert counted in (None, found)  # (a prefix or fuzzy word expanding to one term: counted too)
    assert t.count(query) == found
    t.insert(pa.table({"body": ["alpha again"]}))  # (a fresh row: not only the segments' counts)
    assert t.count(query) == t.find(query, limit=None)[0].num_rows


def test_rows_of_terms_are_read_from_their_postings_without_running_the_search(monkeypatch) -> None:
    """The rule's rows come from the postings alone (the search, which scores them, is not
    run), deletions and a prefilter's rows applied, for trees of terms; a phrase runs the
    search."""
    body = [f"alpha row {i}" if i % 3 else f"beta {i}" for i in range(300)]
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": body}))
    t.create_index("body")
    t.delete_rows(np.arange(0, 300, 7, dtype=np.int64))
    queries = ("alpha", "alpha beta", "+alpha -row", "+beta (alpha 3 OR row)", '"alpha row"')
    expected = {q: sorted(t.find(q, limit=None)[0].column(0).to_pylist()) for q in queries}
    include = list(range(0, 300, 5))
    within = sorted(t.find("alpha", limit=None, include_row_ids=include)[0].column(0).to_pylist())
    ran = []
    monkeypatch.setattr(count_matches, "run_search", lambda req, catalog: ran.append(req) or run_search(req, catalog))
    for query in queries[:-1]:
        assert t.matching_rows(query)[0].tolist() == expected[query], query
    assert t.matching_rows("alpha", include)[0].tolist() == within
    assert not ran
    assert t.matching_rows(queries[-1])[0].tolist() == expected[queries[-1]]
    assert len(ran) == 1


@settings(max_examples=150, deadline=None)
@given(corpus_and_query(deletes=True), st.sampled_from(["segments", "indexed"]), st.lists(st.integers(0, 40), max_size=4))
def test_counts_and_rows_over_overlapping_segments_are_the_reference_s(case, layout, splits):
    """DESIGN §5.4: a row covered by several segments is ranked in the first only, so it
    is counted, and its id given, once; the matches are the brute-force reference's."""
    ref, query = case
    t = engine_table(ref, layout, splits)
    expected = sorted(row for row, _ in ref_search(ref, query))
    assert t.matching_rows(query)[0].tolist() == expected
    assert t.count(query) == len(expected)


@settings(max_examples=100, deadline=None)
@given(corpora(deletes=True), st.sampled_from(["segments", "indexed"]), st.lists(st.integers(0, 40), max_size=4),
       st.data())
def test_counts_by_a_column_from_the_words_postings_are_the_reference_s(tmp_path_factory, ref, layout, splits,
                                                                        data):
    """``counted_by`` (an OR of words' matches counted by a column's codes as their
    postings are read, a row holding several words once; the rows of fresh parts taken
    and counted) over overlapping segments (DESIGN §5.4: a row counted in the first
    segment covering it only) and deleted rows, in a directory keeping the column's codes:
    the brute-force reference's matches counted by their values."""
    with whole_columns():  # (from the first read of a file on: the readers keep what they found narrow)
        db = fts.connect(tmp_path_factory.mktemp("db"))
        t = engine_table(ref, layout, splits, db)
        column = data.draw(st.sampled_from(ref.columns or ["title"]))
        by = data.draw(st.sampled_from(t.snapshot().meta.sql_schema.names))
        words = data.draw(st.lists(st.sampled_from(table_words(ref) or ["a"]), min_size=1, max_size=3))
        query = Match(column, " ".join(words), operator=data.draw(st.sampled_from(["or", "and"])))
        expected = Counter(ref.rows[row].get(by) for row, _ in ref_search(ref, query))
        request = request_for(Search(query, None, by_score=False), t.snapshot(), t.db.settings)
        counted = count_matches.counted_by(request, db, by)
        found = count_matches._bound(request, db)
    union = found is not None and isinstance(found[1], BoundTerms) and not (found[1].require_all
                                                                           and len(found[1].groups) > 1)
    assert (counted is not None) == union  # (counted wherever the words bind to an OR of terms)
    if counted is None:
        return
    got: Counter = Counter()
    for keys, counts in counted:
        got.update({value: int(n) for value, n in zip(keys.to_pylist() + [None], counts.tolist()) if n})
    assert got == expected
