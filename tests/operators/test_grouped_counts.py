"""Counting by a column (operators/grouped_counts.py) on hand-made keys: integer keys over
a dense range (their offsets are the codes) and a sparse one (sorted distinct values),
text keys as plain strings and as dictionaries of several chunks, NULL keys; against
counts made one row at a time."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.operators.grouped_counts import Aggregate, GroupedCounts


def _expected(values: list, limit: int | None) -> list[tuple]:
    counts = sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] if kv[0] is not None else 0))
    return counts if limit is None else counts[:limit]


@given(st.lists(st.none() | st.integers(-2**62, 2**62) | st.integers(0, 5), min_size=1, max_size=60),
       st.none() | st.integers(0, 8))
def test_integer_keys_dense_or_sparse(values, limit):
    key = pa.chunked_array([pa.array(values, pa.int64())])
    schema = pa.schema([pa.field("k", pa.int64())])
    got = GroupedCounts.facets("k", limit).answer(key, pa.table({}), schema)
    assert [tuple(r.values()) for r in got.to_pylist()] == _expected(values, limit)


@given(st.lists(st.lists(st.none() | st.sampled_from(["a", "b", "ß", "", "a b"]), max_size=20), min_size=1, max_size=3),
       st.booleans(), st.none() | st.integers(0, 4))
def test_text_keys_plain_or_as_dictionaries_of_several_chunks(chunks, encoded, limit):
    arrays = [pa.array(c, pa.string()) for c in chunks]
    key = pa.chunked_array([a.dictionary_encode() for a in arrays] if encoded else arrays,
                           pa.dictionary(pa.int32(), pa.string()) if encoded else pa.string())
    schema = pa.schema([pa.field("k", pa.string())])
    got = GroupedCounts.facets("k", limit).answer(key, pa.table({}), schema)
    assert [tuple(r.values()) for r in got.to_pylist()] == _expected([v for c in chunks for v in c], limit)


def test_an_average_past_exact_float_sums_is_declined():
    key = pa.chunked_array([pa.array(["a", "a"])])
    rows = pa.table({"x": pa.array([2**53, 1], pa.int64())})
    schema = pa.schema([pa.field("k", pa.string()), pa.field("x", pa.int64())])
    grouped = GroupedCounts("k", (("k", None), ("m", Aggregate("avg", "x"))), (), 0, None)
    assert grouped.answer(key, rows, schema) is None
    small = pa.table({"x": pa.array([3, 4], pa.int64())})
    assert grouped.answer(key, small, schema).to_pylist() == [{"k": "a", "m": 3.5}]
