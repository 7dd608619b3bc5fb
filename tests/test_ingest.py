"""Data is refused at the door (issue 34): text that is not valid UTF-8 (pyarrow's full
validation) is an InvalidArgument naming the column and the first bad row, and nothing is
written, from a pyarrow table, an insert or a Parquet file alike."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datafusion_fts as fts


def bad_text(n: int = 6, bad_row: int = 4) -> pa.Array:
    """Strings whose row ``bad_row`` holds a byte no UTF-8 text has (not validated)."""
    values = [f"common word {i}".encode() for i in range(n)]
    values[bad_row] = b"common \xff word"
    return pa.array(values, pa.binary()).view(pa.string())


@pytest.fixture(params=["memory", "directory"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> fts.Database:
    return fts.connect(None if request.param == "memory" else tmp_path / "db")


def test_create_table_refuses_invalid_utf8(db: fts.Database) -> None:
    with pytest.raises(fts.InvalidArgument, match=r"column 'body': row 4 is not valid UTF-8"):
        db.create_table("docs", pa.table({"id": list(range(6)), "body": bad_text()}))
    assert db.table_names() == []


def test_insert_refuses_invalid_utf8_and_counts_rows_across_batches(db: fts.Database) -> None:
    t = db.create_table("docs", pa.table({"body": ["alpha"]}))
    good = pa.record_batch({"body": pa.array(["a", "b", "c"])})
    bad = pa.record_batch({"body": bad_text(5, 2)})
    with pytest.raises(fts.InvalidArgument, match=r"row 5 is not valid UTF-8"):
        t.insert(pa.Table.from_batches([good, bad]))
    assert t.count_rows() == 1


def test_a_parquet_file_of_invalid_utf8_is_refused(db: fts.Database, tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"body": bad_text(3, 1)}), path)
    with pytest.raises(fts.InvalidArgument, match=r"row 1 is not valid UTF-8"):
        db.create_table("docs", str(path))
    assert db.table_names() == []
