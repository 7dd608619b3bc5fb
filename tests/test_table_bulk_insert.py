"""``Table.bulk_insert``: a streamed append in one commit, all or nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.errors import InvalidArgument

SCHEMA = pa.schema([("id", pa.int64()), ("body", pa.string())])


def batches(start: int, count: int, size: int, fail_at: int | None = None) -> Iterator[pa.RecordBatch]:
    for n, lo in enumerate(range(start, start + count, size)):
        if n == fail_at:
            raise pa.ArrowInvalid("a malformed block")
        ids = list(range(lo, min(lo + size, start + count)))
        yield pa.record_batch([pa.array(ids, pa.int64()), pa.array([f"w{i} common" for i in ids])],
                              schema=SCHEMA)


def test_bulk_insert_streams_after_the_fresh_rows(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db")
    docs = db.create_table("docs", pa.Table.from_batches(list(batches(0, 10, 10))))
    docs.create_index("body")
    docs.insert(pa.Table.from_batches(list(batches(10, 3, 3))))  # fresh: row ids 10..12
    consumed = []

    def source() -> Iterator[pa.RecordBatch]:
        for batch in batches(13, 1000, 100):
            consumed.append(batch.num_rows)
            yield batch

    version = db.manifest.version
    count = docs.bulk_insert(pa.RecordBatchReader.from_batches(SCHEMA, source()))
    assert count == 1000 and consumed == [100] * 10
    assert db.manifest.version == version + 2  # the flush of the fresh rows, then one commit
    table = docs.to_arrow()
    assert table.column("_rowid").to_pylist() == list(range(1013))
    assert table.column("id").to_pylist() == list(range(1013))
    assert docs.snapshot().fresh == ()
    # The rows are searchable at once (the index covers 0..9; the rest is the tail).
    hit = docs.search("w500", columns=["id"])
    assert hit.column("id").to_pylist() == [500]


def test_a_source_that_fails_half_way_appends_nothing(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db")
    docs = db.create_table("docs", pa.Table.from_batches(list(batches(0, 10, 10))))
    files = sorted(p.name for p in (tmp_path / "db" / "data").iterdir())
    with pytest.raises(pa.ArrowInvalid, match="a malformed block"):
        docs.bulk_insert(pa.RecordBatchReader.from_batches(SCHEMA, batches(10, 2_000_000, 500_000, fail_at=3)))
    assert docs.count_rows() == 10
    assert sorted(p.name for p in (tmp_path / "db" / "data").iterdir()) == files
    assert docs.bulk_insert(pa.Table.from_batches(list(batches(10, 5, 5)))) == 5
    assert docs.to_arrow().column("_rowid").to_pylist() == list(range(15))


def test_bulk_insert_checks_the_columns(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db")
    docs = db.create_table("docs", pa.Table.from_batches(list(batches(0, 10, 10))))
    with pytest.raises(InvalidArgument, match="do not match the table's columns"):
        docs.bulk_insert(pa.table({"id": [1]}))
    assert docs.count_rows() == 10


def test_read_ahead_raises_the_source_error_where_it_happened_and_stops() -> None:
    from datafusion_fts.ingest import prefetched

    produced: list[int] = []

    def source() -> Iterator[int]:
        for i in range(100):
            produced.append(i)
            if i == 5:
                raise pa.ArrowInvalid("a malformed block")
            yield i

    got = []
    with pytest.raises(pa.ArrowInvalid, match="malformed"):
        for item in prefetched(source()):
            got.append(item)
    assert got == [0, 1, 2, 3, 4]
    stream = prefetched(iter(range(1000)), depth=2)
    assert next(stream) == 0
    stream.close()  # a consumer that stops early stops the producer
    assert list(prefetched(iter([]))) == []
