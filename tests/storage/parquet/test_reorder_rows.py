"""Fetched rows put back in the asked order (storage/parquet/reorder_rows.py): exactly what
Arrow's take gives, for text and binary columns of many chunks (sliced, with nulls and
empty values) and for every other column."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from datafusion_fts.storage.parquet.reorder_rows import MANY_CHUNKS, reorder_rows

TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]
VALUES = st.one_of(st.none(), st.text(max_size=12))


@st.composite
def chunked(draw, t: pa.DataType) -> pa.ChunkedArray:
    """A few chunks (left to Arrow) or more than MANY_CHUNKS (reordered by our loop)."""
    chunks = []
    least = draw(st.sampled_from([1, MANY_CHUNKS + 1]))
    for values in draw(st.lists(st.lists(VALUES, max_size=9), min_size=least, max_size=least + 5)):
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            values = [None if v is None else v.encode() for v in values]
        array = pa.array([None, *values, None], t)
        chunks.append(array.slice(1, len(values)))  # (offsets that do not start at 0)
    return pa.chunked_array(chunks, t)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TYPES), st.data())
def test_reordered_as_arrow_takes(t, data):
    column = data.draw(chunked(t))
    n = len(column)
    order = np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=3 * n if n else 0)), dtype=np.int64)
    ints = pa.chunked_array([pa.array(np.arange(len(c), dtype=np.int64)) for c in column.chunks], pa.int64())
    table = pa.table({"text": column, "n": ints})
    got = reorder_rows(table, order)
    assert got.schema == table.schema
    assert got.equals(table.take(pa.array(order)))


def test_a_search_order_over_many_chunks():
    rng = np.random.default_rng(7)
    words = [("w" * int(k)) if k else None for k in rng.integers(0, 40, 5000)]
    column = pa.chunked_array([pa.array(words[i : i + 70]) for i in range(0, 5000, 70)])
    order = rng.permutation(5000)
    got = reorder_rows(pa.table({"body": column}), order)
    assert got.column(0).to_pylist() == [words[i] for i in order]
