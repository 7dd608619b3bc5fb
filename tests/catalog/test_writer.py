"""The one writer (catalog/writer.py; docs/design.md: "Commits, garbage collection and
recovery"): a commit built on an older version is refused and changes nothing, a write
that fails before its commit leaves no file, and the fresh rows a flush commits move in
one step."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.errors import InvalidArgument, StorageError
from datafusion_fts.storage.stores import append_rows

SCHEMA = pa.schema([("body", pa.string())])


def rows(*bodies: str) -> pa.Table:
    return pa.table({"body": list(bodies)}, schema=SCHEMA)


def files(path: Path) -> list[str]:
    return sorted(p.name for p in (path / "data").iterdir()) + sorted(p.name for p in (path / "index").iterdir())


def test_a_commit_built_on_an_older_version_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db")
    db.create_table("docs", rows("alpha", "beta"))
    older = db.writer.state.manifest
    db.table("docs").bulk_insert(rows("gamma"))  # a commit: the version moves on
    current = db.manifest
    renamed = older.with_table(replace(older.tables["docs"], name="other"))
    with pytest.raises(StorageError, match=f"version {older.version} cannot commit over version {current.version}"):
        db.writer.commit(renamed)
    assert db.manifest is current
    assert fts.connect(tmp_path / "db").manifest.version == current.version
    assert db.sql("SELECT count(*) AS n FROM docs").to_pydict() == {"n": [3]}


def test_a_write_failing_before_its_commit_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(append_rows, "FRAGMENT_ROWS", 2)  # a fragment written before the failure
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", rows("alpha"))
    t.create_index("body")
    before = files(tmp_path / "db")

    def failing() -> Iterator[pa.RecordBatch]:
        yield pa.record_batch([pa.array(["b", "c", "d"])], schema=SCHEMA)
        raise OSError("the source went away")

    with pytest.raises(OSError, match="went away"):
        t.bulk_insert(pa.RecordBatchReader.from_batches(SCHEMA, failing()))
    assert files(tmp_path / "db") == before
    assert t.search("alpha").num_rows == 1
    t.bulk_insert(rows("beta"))  # the file ids the failed write took are taken again
    assert db.sql("SELECT count(*) AS n FROM docs").to_pydict() == {"n": [2]}


def test_a_flush_moves_the_fresh_rows_into_the_manifest_in_one_step(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", rows("alpha"))
    t.create_index("body")
    t.insert(rows("beta", "alpha beta"))
    before = db.snapshot("docs")
    assert len(db.state.runs("docs")) == 1 and before.meta.next_rowid == 1
    t.flush()
    after = db.snapshot("docs")
    assert db.state.runs("docs") == () and after.meta.next_rowid == 3
    assert before.row_count == after.row_count == 3  # the same rows, fresh or committed
    assert t.search("beta").to_pydict() == fts.connect(tmp_path / "db").table("docs").search("beta").to_pydict()


def test_a_new_name_is_checked_before_anything_is_written(tmp_path: Path) -> None:
    db = fts.connect(tmp_path / "db")
    for name in ("__fts_mine", "a\tcontrol character", "x" * 129, ""):
        with pytest.raises(InvalidArgument):
            db.create_table(name, rows("alpha"))
    assert db.table_names() == [] and files(tmp_path / "db") == []
