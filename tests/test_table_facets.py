"""``Table.facets``: the most frequent values of a column among a search's matches, as
counted from the rows ``Table.search`` returns, on every tier (segments with deletions,
several segments and fragments, fragments rewritten, an unindexed tail, fresh rows), in
memory and in a directory, counted from the postings or from the rows found; and its
errors."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import TIERS, WORDS, table_on, tables
from whole_columns import whole_columns

import datafusion_fts as fts
from datafusion_fts.errors import InvalidArgument
from datafusion_fts.planner import answer_search


@settings(max_examples=150, deadline=None)
@given(tables(), st.sampled_from(TIERS),
       st.sampled_from(["memory", "directory", "directory, columns read whole"]),
       st.sampled_from(WORDS + ("alpha beta", "+alpha -gamma", "nothing")), st.sampled_from(["cat", "year"]),
       st.none() | st.integers(0, 5))
def test_facets_count_the_values_of_the_rows_a_search_returns(tmp_path_factory, table, tiers, store, query, column,
                                                                limit):
    """Counted from the rows found, and (``fts.counts_from_postings``) from the postings of
    an OR of words by the codes a directory keeps of a column read whole (the rows of
    parts without codes taken and counted): over segments with
    deletions, several segments over several fragments (``segments``), fragments
    rewritten without their deleted rows (``optimized``), an unindexed tail, fresh rows."""
    with whole_columns(store.endswith("whole")):  # (from the first read on: readers keep what they found narrow)
        t, got, expected, fused = _both_ways(tmp_path_factory, table, tiers, store, query, column, limit)
    for answer in got.values():
        assert answer.schema == pa.schema([t.snapshot().meta.sql_schema.field(column),
                                           pa.field("_count", pa.int64(), False)])
        assert [tuple(r.values()) for r in answer.to_pylist()] == expected
    union = query != "+alpha -gamma"  # (an OR of terms, "nothing" too: counted from the postings)
    assert (fused and fused[0] is not None) == (union and tiers != "tail")  # (an unindexed tail: found, then counted)


def _both_ways(tmp_path_factory, table: pa.Table, tiers: str, store: str, query: str, column: str,
               limit: int | None) -> tuple[fts.Table, dict[bool, pa.Table], list[tuple], list]:
    """The table on ``tiers`` in ``store``, its facets with ``fts.counts_from_postings``
    on and off, the counts of the rows ``search`` returns, and what each ``counted_by``
    gave."""
    db = fts.connect(tmp_path_factory.mktemp("db") if store != "memory" else None)
    t = table_on(db, table, tiers)
    values = t.search(query, limit=None, columns=[column]).column(column).to_pylist()
    counts = sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] if kv[0] is not None else 0))
    expected = counts if limit is None else counts[:limit]
    fused: list = []
    real = answer_search.counted_by
    answer_search.counted_by = lambda *a: fused.append(found := real(*a)) or found  # type: ignore[assignment]
    try:
        got = {on: _facets(db, t, query, column, limit, on) for on in (True, False)}
    finally:
        answer_search.counted_by = real  # type: ignore[assignment]
    return t, got, expected, fused


def _facets(db: fts.Database, t: fts.Table, query: str, column: str, limit: int | None, on: bool) -> pa.Table:
    db.settings.set("fts.counts_from_postings", on)
    try:
        return t.facets(query, column, limit=limit)
    finally:
        db.settings.set("fts.counts_from_postings", True)


def test_facets_refuse_what_they_cannot_count() -> None:
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": ["alpha"], "price": [1.5]}))
    t.create_index("body")
    with pytest.raises(InvalidArgument, match="no column 'nope'"):
        t.facets("alpha", "nope")
    with pytest.raises(InvalidArgument, match="text or integer column"):
        t.facets("alpha", "price")
    with pytest.raises(InvalidArgument, match="limit"):
        t.facets("alpha", "body", limit=-1)
    assert t.facets("alpha", "body").to_pylist() == [{"body": "alpha", "_count": 1}]
