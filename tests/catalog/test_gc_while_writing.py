"""Opening a database while another Database writes to it must not delete the writer's
files: a fragment written but not yet committed looks like garbage to everyone else.

(Found through the CLI: ``datafusion-fts stats DB`` during ``datafusion-fts import DB``
deleted the import's fragments, the import then committed a manifest naming missing
files, and the database could no longer be opened.)
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.storage.stores import append_rows
from datafusion_fts.storage.stores.store import DirectoryStore

SCHEMA = pa.schema([("body", pa.string())])


def test_a_reader_opening_mid_write_leaves_the_writers_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(append_rows, "FRAGMENT_ROWS", 100)  # fragments written early in the stream
    path = tmp_path / "db"
    writer = fts.connect(path)
    seen: list[list[str]] = []
    write_fragment = DirectoryStore.write_fragment

    def writing(store: DirectoryStore, frag_id: str, *args):  # type: ignore[no-untyped-def]
        written = write_fragment(store, frag_id, *args)
        if frag_id == "frag-00000002":  # two fragments written, nothing committed: another Database opens
            reader = fts.connect(path)
            seen.append(sorted(p.name for p in (path / "data").iterdir()))
            del reader
        return written

    monkeypatch.setattr(DirectoryStore, "write_fragment", writing)
    batches = [pa.record_batch([pa.array([f"row {i} {j}" for j in range(100)])], schema=SCHEMA) for i in range(3)]
    writer.create_table("docs", pa.RecordBatchReader.from_batches(SCHEMA, iter(batches)))
    assert seen == [["frag-00000001.parquet", "frag-00000002.parquet"]]
    assert writer.table("docs").count_rows() == 300
    del writer
    assert fts.connect(path).sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 300}]


def test_opening_still_collects_leftovers_when_nobody_writes(tmp_path: Path) -> None:
    path = tmp_path / "db"
    db = fts.connect(path)
    db.create_table("docs", pa.table({"body": ["a"]}))
    del db
    leftover = path / "data" / "frag-00000099.parquet.tmp"
    leftover.write_bytes(b"a write that crashed")
    db = fts.connect(path)
    assert not leftover.exists()
    # ... and the check took the writer lock only for the collection.
    db.table("docs").insert(pa.table({"body": ["b"]}))
    other = fts.connect(path)
    assert other.table("docs").count_rows() == 2


def test_a_database_opened_earlier_does_not_undo_a_later_commit(tmp_path: Path) -> None:
    import gc

    path = tmp_path / "db"
    first = fts.connect(path)
    first.create_table("docs", pa.table({"body": ["one"]}))
    del first
    gc.collect()
    early = fts.connect(path)  # opened, only read for now
    other = fts.connect(path)
    other.create_table("other", pa.table({"body": ["two"]}))
    del other
    gc.collect()
    early.create_table("third", pa.table({"body": ["three"]}))  # now the writer
    del early
    gc.collect()
    assert fts.connect(path).table_names() == ["docs", "other", "third"]
