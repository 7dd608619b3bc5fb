"""``Table.facets``: the most frequent values of a column among a search's matches, as
counted from the rows ``Table.search`` returns, on every tier (segments with deletions, an
unindexed tail, fresh rows), in memory and in a directory; and its errors."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.errors import InvalidArgument

WORDS = ("alpha", "beta", "gamma", "delta")


@st.composite
def tables(draw) -> pa.Table:
    n = draw(st.integers(1, 40))
    words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
    return pa.table({
        "body": pa.array(draw(st.lists(words, min_size=n, max_size=n))),
        "cat": pa.array(draw(st.lists(st.none() | st.sampled_from(["news", "blog", "wiki", ""]), min_size=n,
                                      max_size=n)), pa.string()),
        "year": pa.array(draw(st.lists(st.none() | st.integers(1990, 1995), min_size=n, max_size=n)), pa.int32()),
    })


@settings(max_examples=120, deadline=None)
@given(tables(), st.sampled_from(["indexed", "deleted", "fresh", "tail"]), st.sampled_from(["memory", "directory"]),
       st.sampled_from(WORDS + ("alpha beta", "+alpha -gamma", "nothing")), st.sampled_from(["cat", "year"]),
       st.none() | st.integers(0, 5))
def test_facets_count_the_values_of_the_rows_a_search_returns(tmp_path_factory, table, tiers, store, query, column,
                                                                limit):
    db = fts.connect(tmp_path_factory.mktemp("db") if store == "directory" else None)
    t = db.create_table("docs", table)
    if tiers != "tail":
        t.create_index("body")
    if tiers == "deleted":
        t.delete_rows(np.arange(0, table.num_rows, 3, dtype=np.int64))
    elif tiers in ("fresh", "tail"):
        t.insert(table.slice(0, table.num_rows // 2))
    values = t.search(query, limit=None, columns=[column]).column(column).to_pylist()
    counts = sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] if kv[0] is not None else 0))
    expected = counts if limit is None else counts[:limit]
    got = t.facets(query, column, limit=limit)
    assert got.schema == pa.schema([t.snapshot().meta.sql_schema.field(column), pa.field("_count", pa.int64(), False)])
    assert [tuple(r.values()) for r in got.to_pylist()] == expected


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
