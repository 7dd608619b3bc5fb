"""Recovery (docs/design.md: "Commits, garbage collection and recovery"): a log whose rows a
commit already holds is emptied, by the next open and by the next flush or OPTIMIZE, so a
copy of the directory on an object store holds every row in its commits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.storage.files.wal import WriteAheadLog
from datafusion_fts.storage.objects import open_objects
from datafusion_fts.storage.parquet.data_files import RangeCache
from datafusion_fts.storage.stores.remote_store import RemoteStore

# A child that acknowledges a row, then dies between its flush's commit and the emptying
# of the log (the log's truncate exits the process at once).
DIES_BEFORE_TRUNCATE = textwrap.dedent(
    """
    import os, sys
    import pyarrow as pa
    import datafusion_fts as fts
    from datafusion_fts.storage.files.wal import WriteAheadLog
    t = fts.connect(sys.argv[1]).table("docs")
    t.insert(pa.table({"id": [2], "body": ["fox two"]}))
    WriteAheadLog.truncate = lambda self: os._exit(17)
    t.flush()
    """
)


def _logged_but_committed(tmp_path: Path) -> Path:
    path = tmp_path / "db"
    fts.connect(path).create_table("docs", pa.table({"id": [0, 1], "body": ["fox", "dog"]})).create_index("body")
    child = subprocess.run([sys.executable, "-c", DIES_BEFORE_TRUNCATE, str(path)])
    assert child.returncode == 17
    assert (path / "wal" / "docs.log").stat().st_size > 0
    return path


def _copy_opens_on_a_store(path: Path, tmp_path: Path) -> None:
    """A copy of ``path`` opens as a database on an object store (which reads no log)."""
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(path), str(copy)], check=True)
    RemoteStore(open_objects(str(copy)), RangeCache(lambda: 0))


def test_an_open_empties_a_log_whose_rows_a_commit_holds(tmp_path: Path) -> None:
    path = _logged_but_committed(tmp_path)
    db = fts.connect(path)
    assert (path / "wal" / "docs.log").stat().st_size == 0
    assert db.table("docs").to_arrow().column("id").to_pylist() == [0, 1, 2]
    _copy_opens_on_a_store(path, tmp_path)


def test_optimize_empties_a_log_a_failed_truncate_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flush whose log could not be emptied after its commit (the commit is the write)
    leaves it for a later flush: OPTIMIZE and flush() empty it, fresh rows or none."""
    path = tmp_path / "db"
    db = fts.connect(path)
    t = db.create_table("docs", pa.table({"id": [0, 1], "body": ["fox", "dog"]}))
    t.insert(pa.table({"id": [2], "body": ["fox two"]}))
    real = WriteAheadLog.truncate

    def fails(self: WriteAheadLog) -> None:
        raise fts.StorageError("injected: cannot empty the log")

    monkeypatch.setattr(WriteAheadLog, "truncate", fails)
    t.flush()
    assert (path / "wal" / "docs.log").stat().st_size > 0
    assert db.counters["logs_left_unemptied"] == 1
    monkeypatch.setattr(WriteAheadLog, "truncate", real)
    db.sql("OPTIMIZE docs")
    assert (path / "wal" / "docs.log").stat().st_size == 0
    assert t.to_arrow().column("id").to_pylist() == [0, 1, 2]
    del db, t
    _copy_opens_on_a_store(path, tmp_path)
    assert fts.connect(path).table("docs").to_arrow().column("id").to_pylist() == [0, 1, 2]
