"""Read-only opening (issue 34, item 4; docs/design.md: "Concurrency"): a database on
storage that cannot be written, or opened with ``connect(path, read_only=True)``, answers
every read as a read-write open does, refuses every write with ``ReadOnlyError`` naming
why, and changes nothing in its directory (no ``LOCK``, no cut log tail, no garbage
collected, no directory made), while rows acknowledged into the logs are still read.

Root ignores permission bits, so storage that cannot be written is a real read-only
mount (``tmpfs`` remounted ``ro``); those tests are skipped where mounting is not
permitted."""

from __future__ import annotations

import gc
import re
import shutil
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from read_only_mount import listing, read_only_copy

import datafusion_fts as fts
from datafusion_fts.query import Match, Phrase

ROWS = pa.table({
    "id": pa.array(range(8), pa.int64()),
    "title": ["Foxes", "Bears", "Engines", "Dogs", "Cats", "Owls", "Moles", "Bats"],
    "body": [
        "the quick brown fox jumps over the lazy dog",
        "brown bears and brown foxes",
        "a quick query engine",
        "the lazy dog sleeps",
        "cats chase the quick mouse",
        "owls hunt at night",
        "moles dig brown tunnels",
        "bats fly at night over the fox den",
    ],
})
FRESH = pa.table({"id": pa.array([8, 9], pa.int64()), "title": ["Fresh fox", "Fresh owl"],
                  "body": ["a fresh quick fox", "a fresh night owl"]})
# Leftovers only a writer may touch: the torn start of a log record (a write that never
# returned: the writer cuts it) and a data file no commit names (garbage it deletes).
TORN_TAIL = struct.pack("<II", 1000, 0) + b"\xff\xff\xff\xffpart of a record"
LEFTOVER = "data/frag-00009999.parquet.tmp"


def build(path: Path) -> Path:
    """``docs``: 8 committed rows (body indexed with positions, title indexed), row 3
    deleted, 2 more rows fresh (acknowledged, in the log, not flushed), a torn log tail
    and a leftover file; ``other``: 2 committed rows; ``placed``: Parquet files indexed in
    place beside ``path``, one indexed, one added later (an unindexed tail)."""
    db = fts.connect(path)
    docs = db.create_table("docs", ROWS)
    docs.create_index("body", positions=True)
    docs.create_index("title")
    docs.delete("id = 3")
    docs.insert(FRESH)
    db.create_table("other", pa.table({"body": ["alpha", "beta"]}))
    source = path.parent / "source"
    source.mkdir()
    pq.write_table(pa.table({"body": ["placed fox", "placed owl"]}), source / "a.parquet")
    db.index_in_place("placed", source).create_index("body")
    assert docs.snapshot().fresh  # (the inserted rows are still in the fresh tier)
    del db, docs
    gc.collect()  # (drops the writer lock)
    pq.write_table(pa.table({"body": ["late fox"]}), source / "b.parquet")  # (an unindexed tail)
    with open(path / "wal" / "docs.log", "ab") as log:
        log.write(TORN_TAIL)
    (path / LEFTOVER).write_bytes(b"never committed")
    return path


def answers(db: fts.Database) -> dict[str, Any]:
    """Every kind of read: the catalog, rows, Python searches, SQL searches, EXPLAIN."""
    docs = db.table("docs")

    def frame(sql: str) -> dict[str, list[Any]]:
        return db.sql(sql).to_arrow_table().to_pydict()

    def search(*args: Any, **kwargs: Any) -> dict[str, list[Any]]:
        return docs.search(*args, **kwargs).to_pydict()

    explained = frame("EXPLAIN SELECT id FROM docs WHERE MATCH(body, 'quick fox') ORDER BY score() DESC LIMIT 3")
    return {
        "tables": db.table_names(),
        "count": docs.count_rows(),
        "rows": docs.to_arrow().to_pydict(),
        "match": search(Match("body", "quick fox"), limit=10),
        "phrase": search(Phrase("body", "quick brown"), limit=10),
        "query string": search("fox OR night", limit=5, columns=["id", "title"]),
        "title": search(Match("title", "fresh"), limit=10),
        "stream": docs.search_stream(Match("body", "brown"), limit=10).read_all().to_pydict(),
        "sql match": frame("SELECT id, title, score() AS s FROM docs WHERE MATCH(body, 'quick fox') "
                           "ORDER BY s DESC, id"),
        "sql and": frame("SELECT id FROM docs WHERE MATCH(body, 'night') AND id > 5 ORDER BY id"),
        "fts_search": frame("SELECT _rowid, _score FROM fts_search('docs', 'body', 'fox', 5) ORDER BY _score DESC"),
        "sql count": frame("SELECT count(*) AS n FROM docs"),
        "sql other": frame("SELECT body FROM other ORDER BY body"),
        "in place": db.table("placed").search(Match("body", "fox"), limit=5).to_pydict(),
        "sql in place": frame("SELECT body FROM placed WHERE MATCH(body, 'fox OR owl') ORDER BY body"),
        "describe": frame("DESCRIBE docs"),
        "explain": {name: [re.sub(r"__fts_result_[0-9a-f]+", "__fts_result_", str(v)) for v in values]
                    for name, values in explained.items()},  # (a result's scratch name is random)
    }


def writes(source: Path) -> dict[str, Callable[[fts.Database], Any]]:
    """Every kind of write, by the Python API and by SQL (``source``: a Parquet file)."""
    return {
        "insert": lambda db: db.table("docs").insert(pa.table({"id": [10], "title": ["x"], "body": ["fox"]})),
        "flush": lambda db: db.table("docs").flush(),
        "bulk_insert": lambda db: db.table("docs").bulk_insert(ROWS),
        "delete": lambda db: db.table("docs").delete("id = 1"),
        "delete_rows": lambda db: db.table("docs").delete_rows(pa.array([0]).to_numpy()),
        "create_table": lambda db: db.create_table("new", pa.table({"a": ["x"]})),
        "drop_table": lambda db: db.drop_table("other"),
        "create_index": lambda db: db.table("other").create_index("body"),
        "build_segment": lambda db: db.table("docs").build_segment("body", (0, 3)),
        "optimize": lambda db: db.table("docs").optimize(),
        "index_in_place": lambda db: db.index_in_place("placed", source),
        "sql insert": lambda db: db.sql("INSERT INTO docs VALUES (11, 'y', 'fox')"),
        "sql update": lambda db: db.sql("UPDATE docs SET title = 'z' WHERE id = 2"),
        "sql delete": lambda db: db.sql("DELETE FROM docs WHERE MATCH(body, 'owls')"),
        "sql create": lambda db: db.sql("CREATE TABLE made (a VARCHAR)"),
        "sql create as": lambda db: db.sql("CREATE TABLE copied AS SELECT * FROM other"),
        "sql drop": lambda db: db.sql("DROP TABLE other"),
        "sql index": lambda db: db.sql("CREATE FULLTEXT INDEX ON other (body)"),
        "sql optimize": lambda db: db.sql("OPTIMIZE docs"),
    }


@pytest.fixture
def built(tmp_path: Path) -> Path:
    return build(tmp_path / "db")


@pytest.fixture
def expected(built: Path, tmp_path: Path) -> dict[str, Any]:
    """The answers of a read-write open (of a copy: it cuts the torn tail, as a writer may)."""
    copy = tmp_path / "rw"
    shutil.copytree(built, copy)
    db = fts.connect(copy)
    try:
        return answers(db)
    finally:
        del db
        gc.collect()


@pytest.fixture
def mounted(built: Path) -> Iterator[Path]:
    """A copy of the built database on a read-only mount."""
    with read_only_copy(built) as path:
        yield path


def check_writes_refused(db: fts.Database, root: Path, reason: str, source: Path) -> None:
    """Each write raises ReadOnlyError naming the database and ``reason``; nothing in
    ``root`` changes and the reads still answer as before."""
    before, seen = listing(root), answers(db)
    for name, write in writes(source).items():
        with pytest.raises(fts.ReadOnlyError) as refused:
            write(db)
        message = str(refused.value)
        assert str(root) in message and reason in message and "read-only" in message, (name, message)
        assert isinstance(refused.value, fts.StorageError) and refused.value.reason.startswith(reason.split(":")[0])
        assert listing(root) == before, name
    assert answers(db) == seen
    assert sorted(db.ctx.catalog().schema().names()) == sorted(db.table_names())  # (no half-made table)


def test_a_read_only_mount_opens_and_reads_as_a_writable_one(mounted: Path, expected: dict[str, Any]) -> None:
    before = listing(mounted)
    db = fts.connect(mounted)
    assert db.read_only is not None and "Read-only file system" in db.read_only and "LOCK" in db.read_only
    assert "read-only" in repr(db)
    got = answers(db)
    assert got == expected
    assert got["count"] == len(ROWS) - 1 + len(FRESH)  # (the fresh rows were replayed from the log)
    assert {2, 8} <= set(got["match"]["_rowid"]) and 3 not in got["rows"]["_rowid"]
    assert listing(mounted) == before


def test_a_read_only_mount_refuses_every_write(mounted: Path, tmp_path: Path) -> None:
    source = tmp_path / "placed.parquet"
    pq.write_table(pa.table({"body": ["in place"]}), source)
    db = fts.connect(mounted)
    check_writes_refused(db, mounted, "its storage cannot be written: [Errno 30] Read-only file system", source)


def test_read_only_asked_reads_as_a_writable_open_and_changes_nothing(built: Path, expected: dict[str, Any]) -> None:
    before = listing(built)
    assert "LOCK" in before
    db = fts.connect(built, read_only=True)
    assert db.read_only == "read_only=True was asked"
    assert answers(db) == expected
    assert listing(built) == before
    assert (built / "wal" / "docs.log").read_bytes().endswith(TORN_TAIL)  # (not cut)
    assert (built / LEFTOVER).exists()  # (not collected)


def test_read_only_asked_refuses_every_write(built: Path, tmp_path: Path) -> None:
    source = tmp_path / "placed.parquet"
    pq.write_table(pa.table({"body": ["in place"]}), source)
    db = fts.connect(built, read_only=True)
    check_writes_refused(db, built, "read_only=True was asked", source)


def test_read_only_asked_makes_no_lock_and_no_directory(built: Path) -> None:
    """A directory without ``LOCK`` (a copy, say) and without ``wal/`` (no fresh rows)
    stays so; a writer that comes later is seen by the reader from then on."""
    db = fts.connect(built)
    db.table("docs").flush()  # (the torn tail is cut; no fresh rows left to lose)
    expected = answers(db)
    del db
    gc.collect()
    (built / "LOCK").unlink()
    shutil.rmtree(built / "wal")
    before = listing(built)
    reader = fts.connect(built, read_only=True)
    assert answers(reader) == expected
    with pytest.raises(fts.ReadOnlyError):
        reader.table("docs").insert(FRESH)
    assert listing(built) == before and not (built / "LOCK").exists() and not (built / "wal").exists()

    writer = fts.connect(built)
    writer.table("docs").insert(pa.table({"id": [12], "title": ["late"], "body": ["a late fox"]}))
    assert reader.table("docs").count_rows() == expected["count"] + 1
    assert 12 in reader.sql("SELECT id FROM docs WHERE MATCH(body, 'late')").to_pydict()["id"]


def test_read_only_reader_sees_a_concurrent_writers_inserts_and_commits(built: Path) -> None:
    writer = fts.connect(built)
    reader = fts.connect(built, read_only=True)
    count = reader.table("docs").count_rows()
    writer.table("docs").insert(pa.table({"id": [20], "title": ["t"], "body": ["zebra"]}))
    assert reader.table("docs").search(Match("body", "zebra")).column("id").to_pylist() == [20]
    writer.table("docs").flush()
    writer.table("docs").optimize()
    assert reader.table("docs").count_rows() == count + 1
    assert reader.table("docs").search(Match("body", "zebra")).column("id").to_pylist() == [20]


def test_read_only_needs_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(fts.StorageError, match="read-only: it is not a directory"):
        fts.connect(tmp_path / "missing", read_only=True)
    assert not (tmp_path / "missing").exists()
    with pytest.raises(fts.InvalidArgument, match="read_only=True needs a database directory"):
        fts.connect(read_only=True)


def test_a_new_database_on_a_read_only_mount_is_refused(mounted: Path) -> None:
    """Only an existing directory falls back to reading: one that cannot be made is an
    error, as before."""
    with pytest.raises(fts.StorageError, match="cannot create database directory") as refused:
        fts.connect(mounted / "new")
    assert not isinstance(refused.value, fts.ReadOnlyError)


def test_a_damaged_log_is_still_refused_read_only(built: Path) -> None:
    """Read-only opening reads the logs as any reader does: damage is reported, not skipped."""
    log = built / "wal" / "docs.log"
    data = bytearray(log.read_bytes()[: -len(TORN_TAIL)])
    data[12] ^= 0xFF  # (inside the record's payload: whole, but failing its crc32)
    log.write_bytes(bytes(data))
    before = listing(built)
    with pytest.raises(fts.StorageError, match="damaged record"):
        fts.connect(built, read_only=True)
    assert listing(built) == before


def test_files_without_a_manifest_are_refused_read_only(built: Path) -> None:
    """As a writable open refuses them (they are not leftovers), and without deleting
    anything: a read-only opener never collects garbage."""
    (built / "manifest.json").unlink()
    before = listing(built)
    with pytest.raises(fts.StorageError, match="but no manifest.json"):
        fts.connect(built, read_only=True)
    assert listing(built) == before
