"""Counting by a column (operators/grouped_counts.py) on hand-made keys: integer keys,
text keys as plain strings and as dictionaries, in one part or several (the fragments of
a table, each with keys of its own), coded rows that are places in a column's codes (as
a store keeping the column decoded gives them), NULL keys; against counts made one row at
a time."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.operators.grouped_counts import Aggregate, GroupedCounts
from datafusion_fts.storage.coded_rows import CodedRows


def _expected(values: list, limit: int | None) -> list[tuple]:
    counts = sorted(Counter(values).items(), key=lambda kv: (-kv[1], kv[0] is None, kv[0] if kv[0] is not None else 0))
    return counts if limit is None else counts[:limit]


@given(st.lists(st.none() | st.integers(-2**62, 2**62) | st.integers(0, 5), min_size=1, max_size=60),
       st.none() | st.integers(0, 8))
def test_integer_keys(values, limit):
    key = [CodedRows.of(pa.array(values, pa.int64()))]
    schema = pa.schema([pa.field("k", pa.int64())])
    got = GroupedCounts.facets("k", limit).answer(key, pa.table({}), schema)
    assert [tuple(r.values()) for r in got.to_pylist()] == _expected(values, limit)


@given(st.lists(st.lists(st.none() | st.sampled_from(["a", "b", "ß", "", "a b"]), max_size=20), min_size=1, max_size=3),
       st.booleans(), st.booleans(), st.none() | st.integers(0, 4))
def test_text_keys_plain_or_as_dictionaries_in_several_parts(chunks, encoded, placed, limit):
    arrays = [pa.array(c, pa.string()) for c in chunks]
    key = [CodedRows.of(a.dictionary_encode() if encoded else a) for a in arrays]
    if placed:  # (each part's rows as places in a longer column's codes, reversed)
        key = [CodedRows(k.codes[::-1].copy(), np.arange(len(k))[::-1].copy(), k.keys) for k in key]
    schema = pa.schema([pa.field("k", pa.string())])
    got = GroupedCounts.facets("k", limit).answer(key, pa.table({}), schema)
    assert [tuple(r.values()) for r in got.to_pylist()] == _expected([v for c in chunks for v in c], limit)


def test_an_average_past_exact_float_sums_is_declined():
    key = [CodedRows.of(pa.array(["a", "a"]))]
    rows = pa.table({"x": pa.array([2**53, 1], pa.int64())})
    schema = pa.schema([pa.field("k", pa.string()), pa.field("x", pa.int64())])
    grouped = GroupedCounts("k", (("k", None), ("m", Aggregate("avg", "x"))), (), 0, None)
    assert grouped.answer(key, rows, schema) is None
    small = pa.table({"x": pa.array([3, 4], pa.int64())})
    assert grouped.answer(key, small, schema).to_pylist() == [{"k": "a", "m": 3.5}]


@given(st.lists(st.none() | st.integers(0, 2_000), min_size=300, max_size=3_000), st.booleans(),
       st.none() | st.integers(0, 400))
def test_many_keys_are_ranked_and_taken_by_pyarrow(values, text, limit):
    """Past a few hundred distinct keys the groups' order and page are made by pyarrow
    (a few are made in Python): the same counts, order and NULL placement."""
    array = pa.array([None if v is None else (f"k{v:05d}" if text else v) for v in values],
                     pa.string() if text else pa.int64())
    schema = pa.schema([pa.field("k", array.type)])
    got = GroupedCounts.facets("k", limit).answer([CodedRows.of(array)], pa.table({}), schema)
    assert [tuple(r.values()) for r in got.to_pylist()] == _expected(array.to_pylist(), limit)
