"""``Table.search_stream``: the rows of ``search`` as a stream of bounded batches, their
columns fetched as the stream is read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.errors import InvalidArgument
from datafusion_fts.query import Match
from datafusion_fts.storage.snapshot import TableSnapshot


@pytest.fixture
def docs(tmp_path: Path):
    db = fts.connect(tmp_path / "db")
    n = 3000
    table = db.create_table("docs", pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "body": [f"common w{i % 7} " + "filler " * (i % 5) for i in range(n)],
    }))
    table.create_index("body")
    table.insert(pa.table({"id": pa.array([n, n + 1], pa.int64()), "body": ["common fresh", "other"]}))
    return table


@pytest.mark.parametrize("batch_rows", [1, 7, 1000, 10_000])
@pytest.mark.parametrize("limit, offset", [(None, 0), (2500, 10), (5, 3000)])
def test_stream_equals_search(docs, batch_rows: int, limit, offset: int) -> None:
    query = Match("body", "common w3")
    reader = docs.search_stream(query, limit=limit, offset=offset, batch_rows=batch_rows)
    batches = list(reader)
    assert all(b.num_rows <= batch_rows for b in batches)
    streamed = pa.Table.from_batches(batches, schema=reader.schema)
    expected = docs.search(query, limit=limit, offset=offset)
    assert streamed.equals(expected)
    if limit is None:
        assert streamed.num_rows == 3001  # every matching row, the fresh one included


def test_columns_are_fetched_a_batch_at_a_time(docs, monkeypatch) -> None:
    asked: list[int] = []
    take = TableSnapshot.take

    def counting(self, row_ids, columns):
        asked.append(len(row_ids))
        return take(self, row_ids, columns)

    monkeypatch.setattr(TableSnapshot, "take", counting)
    reader = docs.search_stream("common", columns=["id"], batch_rows=500)
    assert asked == []  # nothing fetched before the stream is read
    first = reader.read_next_batch()
    assert first.num_rows == 500 and asked == [500]
    rest = reader.read_all()
    assert rest.num_rows == 3001 - 500 and max(asked) == 500


def test_no_columns_and_no_rows(docs) -> None:
    assert docs.search_stream("common", columns=[]).schema.names == ["_rowid", "_score"]
    empty = docs.search_stream("absentword").read_all()
    assert empty.num_rows == 0 and empty.schema.names == ["_rowid", "_score", "id", "body"]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_bad_batch_rows(docs, bad) -> None:
    with pytest.raises(InvalidArgument, match="batch_rows"):
        docs.search_stream("common", batch_rows=bad)
