"""Several Databases on one directory (docs/design.md: "Commits, garbage collection and recovery"):
one writer at a time, readers see every commit and acknowledged insert of the writer (in this
process or another) at their next query, a Database that becomes the writer first adopts what others
did, and garbage collection never makes a reader give a wrong answer."""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.query import Match, Phrase

WORDS = ["alpha", "beta", "gamma", "delta"]
QUERIES = [Match("body", "alpha beta"), Phrase("body", "beta gamma"), Match("body", "gamma delta", operator="and")]


def docs(start: int, n: int) -> pa.Table:
    rng = random.Random(start)
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "body": [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))) for _ in range(n)],
    })


def view(db: fts.Database) -> dict[str, Any]:
    """What a user of ``db`` can see of table docs: its rows, its SQL count, and search
    results with their exact scores."""
    t = db.table("docs")
    return {
        "rows": t.to_arrow().sort_by("_rowid").to_pydict(),
        "count": db.sql("SELECT count(*) AS n FROM docs").to_pylist()[0]["n"],
        "hits": [t.search(q, limit=None, columns=[]).to_pydict() for q in QUERIES],
        "indexes": sorted(t.snapshot().meta.indexes),
    }


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.integers(1, 6)),
        st.tuples(st.just("bulk_insert"), st.integers(1, 6)),
        st.tuples(st.just("delete"), st.integers(0, 30)),
        st.sampled_from([("flush",), ("optimize",), ("create_index",), ("build_segment",)]),
    ),
    max_size=10,
)


def apply(t: fts.Table, op: tuple, next_id: int) -> int:
    """Run ``op`` on ``t``; returns the next id to insert."""
    kind = op[0]
    if kind == "insert":
        t.insert(docs(next_id, op[1]))
        return next_id + op[1]
    if kind == "bulk_insert":
        t.bulk_insert(docs(next_id, op[1]))
        return next_id + op[1]
    if kind == "delete":
        t.delete(f"id = {op[1]}")
    elif kind == "flush":
        t.flush()
    elif kind == "optimize":
        t.optimize()
    elif kind == "create_index" and "body" not in t.snapshot().meta.indexes:
        t.create_index("body", positions=True)
    elif kind == "build_segment" and "body" in t.snapshot().meta.indexes:
        t.build_segment("body", row_range=(0, max(next_id // 2, 0)))
    return next_id


@given(ops=OPS, grace=st.sampled_from([0, 600]))
@settings(max_examples=max(settings.default.max_examples // 4, 1))  # (a directory and a process per example)
def test_a_reader_sees_each_change_of_the_writer_as_the_writer_does(ops: list[tuple], grace: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        writer = fts.connect(tmp, config={"fts.gc_grace_seconds": grace})
        t = writer.create_table("docs", docs(0, 4))
        reader = fts.connect(tmp)  # opened before the writes, as a shell left open
        assert view(reader) == view(writer)
        next_id = 4
        for op in ops:
            next_id = apply(t, op, next_id)
            assert view(reader) == view(writer), op
        late = fts.connect(tmp)  # (what a process opening it now sees)
        assert view(late) == view(writer)


def test_a_database_opened_earlier_does_not_undo_a_later_commit(tmp_path: Path) -> None:
    path = tmp_path / "db"
    first = fts.connect(path)
    first.create_table("docs", pa.table({"body": ["one"]}))
    del first
    gc.collect()  # (as a process that closed it: its writer lock goes with it)
    early = fts.connect(path)  # opened, only read for now
    other = fts.connect(path)
    other.create_table("other", pa.table({"body": ["two"]}))
    del other
    gc.collect()  # (as a process that closed it: its writer lock goes with it)
    early.create_table("third", pa.table({"body": ["three"]}))  # now the writer
    del early
    gc.collect()  # (as a process that closed it: its writer lock goes with it)
    assert fts.connect(path).table_names() == ["docs", "other", "third"]


def test_a_database_becoming_the_writer_keeps_the_rows_another_left_in_the_log(tmp_path: Path) -> None:
    path = tmp_path / "db"
    first = fts.connect(path)
    first.create_table("docs", docs(0, 2)).create_index("body")
    del first
    gc.collect()  # (as a process that closed it: its writer lock goes with it)
    early = fts.connect(path)
    other = fts.connect(path)
    other.table("docs").insert(docs(2, 3))  # acknowledged: in the log, not in a fragment
    del other
    gc.collect()  # (as a process that closed it: its writer lock goes with it)
    early.create_table("more", docs(0, 1))  # the writer now, without a query in between
    early.table("docs").insert(docs(5, 1))
    for db in (early, fts.connect(path)):
        rows = db.table("docs").to_arrow()
        assert rows.column("id").to_pylist() == list(range(6))
        assert rows.column("_rowid").to_pylist() == list(range(6))
    early.table("docs").flush()
    del early
    gc.collect()  # (as a process that closed it: its writer lock goes with it)
    reopened = fts.connect(path)
    assert reopened.table("docs").to_arrow().column("id").to_pylist() == list(range(6))
    hits = reopened.table("docs").search(Match("body", " ".join(WORDS)), limit=None, columns=["id"])
    assert sorted(hits.column("id").to_pylist()) == list(range(6))


def test_a_second_writer_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "db"
    writer = fts.connect(path)
    writer.create_table("docs", docs(0, 2))
    other = fts.connect(path)
    with pytest.raises(fts.StorageError, match="being written by another Database"):
        other.table("docs").insert(docs(2, 1))
    assert view(other) == view(writer)
    assert writer.table("docs").count_rows() == 2


def test_a_reader_indexes_each_row_another_database_inserts_once(tmp_path: Path) -> None:
    writer = fts.connect(tmp_path / "db")
    t = writer.create_table("docs", docs(0, 4))
    t.create_index("body")
    reader = fts.connect(tmp_path / "db")
    for i in range(6):
        t.insert(docs(4 + 3 * i, 3))
        assert view(reader) == view(writer)
    assert reader.counters["fresh_rows_tokenized"] == 18  # not 3 + 6 + ... + 18
    t.flush()
    t.insert(docs(22, 2))  # after the flush the log starts over
    assert view(reader) == view(writer)
    assert reader.counters["fresh_rows_tokenized"] == 20


def test_refresh_reads_nothing_when_nothing_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = fts.connect(tmp_path / "db")
    writer.create_table("docs", docs(0, 4)).create_index("body")
    reader = fts.connect(tmp_path / "db")
    view(reader)
    loads: list[int] = []
    real = reader.store.load_manifest
    monkeypatch.setattr(reader.store, "load_manifest", lambda: loads.append(1) or real())
    view(reader)
    assert loads == []
    writer.table("docs").insert(docs(4, 1))
    view(reader)
    assert loads == [1]


def test_a_flush_between_reading_the_manifest_and_the_log_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = fts.connect(tmp_path / "db")
    t = writer.create_table("docs", docs(0, 3))
    t.create_index("body")
    reader = fts.connect(tmp_path / "db")
    t.insert(docs(3, 4))
    real = reader.store.load_manifest
    raced: list[int] = []

    def load_manifest() -> Any:
        manifest = real()
        if not raced:  # the reader holds the old manifest; the writer flushes, emptying the log
            raced.append(manifest.version)
            t.flush()
        return manifest

    monkeypatch.setattr(reader.store, "load_manifest", load_manifest)
    snap = reader.snapshot("docs")  # one refresh, during which the flush lands
    assert raced and snap.meta.next_rowid == 7  # the manifest after the flush ...
    assert sum(b.num_rows for b in snap.fresh) == 0  # ... so the 4 rows are neither lost nor twice
    assert view(reader) == view(writer)


def test_a_table_created_again_does_not_get_the_rows_a_cut_short_drop_left_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datafusion_fts.storage.files.wal import WriteAheadLog

    db = fts.connect(tmp_path / "db")
    db.create_table("docs", docs(0, 2)).insert(docs(2, 3))
    with monkeypatch.context() as m:
        m.setattr(WriteAheadLog, "truncate", lambda self: None)  # (died after the drop's commit)
        db.drop_table("docs")
    del db
    gc.collect()
    db = fts.connect(tmp_path / "db")
    db.create_table("docs", docs(10, 1))
    for again in (db, fts.connect(tmp_path / "db")):
        assert again.table("docs").to_arrow().column("id").to_pylist() == [10]


# ------------------------------------------------------------------ garbage collection


SQL_SEARCH = "SELECT id, score() AS s FROM docs WHERE MATCH(body, 'alpha beta') ORDER BY s DESC, id"


@pytest.mark.parametrize("via", ["t.search", "sql"])
@pytest.mark.parametrize("grace", [0, 600])
def test_a_search_whose_segments_are_deleted_meanwhile_answers_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grace: int, via: str
) -> None:
    def search(db: fts.Database) -> Any:
        if via == "sql":
            return db.sql(SQL_SEARCH).to_pylist()
        return db.table("docs").search(QUERIES[0], limit=None, columns=["id"]).to_pydict()

    path = tmp_path / "db"
    writer = fts.connect(path, config={"fts.gc_grace_seconds": grace})
    t = writer.create_table("docs", docs(0, 40))
    t.create_index("body")
    t.insert(docs(40, 5))
    t.flush()  # two segments: OPTIMIZE merges them into a third, retiring both
    old = [s.id for s in t.snapshot().meta.indexes["body"].segments]
    expected = search(writer)
    reader = fts.connect(path)
    real = reader.store.read_segment
    interleaved: list[str] = []

    def read_segment(seg_id: str, *args: Any) -> tuple[dict[str, pa.Array], dict]:
        if not interleaved:  # the reader has its snapshot; another Database optimizes now
            interleaved.append(seg_id)
            writer.table("docs").optimize()
        return real(seg_id, *args)

    monkeypatch.setattr(reader.store, "read_segment", read_segment)
    assert search(reader) == expected
    assert interleaved
    on_disk = {p.name for p in (path / "index").iterdir()}
    assert set(old) <= on_disk if grace else not set(old) & on_disk
    assert search(reader) == search(writer) == expected
    assert view(reader) == view(writer)


def test_a_search_missing_a_file_its_manifest_names_is_a_storage_error(tmp_path: Path) -> None:
    import shutil

    db = fts.connect(tmp_path / "db")
    db.create_table("docs", docs(0, 5)).create_index("body")
    del db
    gc.collect()
    (seg,) = (tmp_path / "db" / "index").iterdir()
    shutil.rmtree(seg)  # damage: not a retired file
    with pytest.raises(fts.StorageError, match="which its manifest names") as err:
        fts.connect(tmp_path / "db").table("docs").search(QUERIES[0])
    assert not isinstance(err.value, fts.StaleSnapshotError)


def test_a_read_of_a_file_deleted_after_its_grace_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "db"
    writer = fts.connect(path, config={"fts.gc_grace_seconds": 0})
    writer.create_table("docs", docs(0, 5))
    # (a reader that has not opened the file: one holding the table in memory has)
    reader = fts.connect(path, config={"fts.memory_table_bytes": 0})
    snap = reader.snapshot("docs")  # an old snapshot, held past the grace period
    writer.drop_table("docs")
    with pytest.raises(fts.StaleSnapshotError, match="fts.gc_grace_seconds") as err:
        list(snap.scan(["body"]))
    assert isinstance(err.value, fts.FtsError) and err.value.file_id.startswith("frag-")
    assert reader.table_names() == []


def test_retired_files_are_deleted_once_their_grace_is_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "db"
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    db = fts.connect(path, config={"fts.gc_grace_seconds": 60})
    t = db.create_table("docs", docs(0, 10))
    t.create_index("body")
    t.insert(docs(10, 2))
    t.flush()
    before = {p.name for p in (path / "index").iterdir()}
    t.optimize()  # retires both segments at t = 1,000,000
    assert before < {p.name for p in (path / "index").iterdir()}
    now[0] += 59
    db.create_table("other", docs(0, 1))  # a commit inside the grace period keeps them
    assert before < {p.name for p in (path / "index").iterdir()}
    now[0] += 1
    db.create_table("third", docs(0, 1))
    assert not before & {p.name for p in (path / "index").iterdir()}
    assert db.manifest.retired == ()  # (and the manifest forgot them)
    assert t.search(QUERIES[0], limit=None).num_rows > 0


def test_a_reload_that_finds_a_deletion_vector_gone_is_an_error_once_then_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datafusion_fts.storage.stores import store

    writer = fts.connect(tmp_path / "db", config={"fts.gc_grace_seconds": 0})
    t = writer.create_table("docs", docs(0, 6))
    reader = fts.connect(tmp_path / "db")
    t.delete("id = 1")
    real = reader.store.read_deletes
    gone: list[str] = []

    def read_deletes(dv_id: str, crc: int | None) -> Any:
        if not gone:  # (as if deleted between the reader's read of the manifest and of the file)
            gone.append(dv_id)
            raise store.file_gone(reader.store.root, "deletion vector", dv_id)
        return real(dv_id, crc)

    monkeypatch.setattr(reader.store, "read_deletes", read_deletes)
    with pytest.raises(fts.StaleSnapshotError):
        reader.sql("SELECT count(*) AS n FROM docs")
    assert gone
    assert reader.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": 5}]
    assert view(reader) == view(writer)


@pytest.mark.parametrize("value", [-1, "x", float("inf"), True, None])
def test_the_grace_setting_rejects_what_is_not_seconds(value: Any) -> None:
    with pytest.raises(fts.InvalidArgument, match="fts.gc_grace_seconds"):
        fts.connect(config={"fts.gc_grace_seconds": value})


def test_the_grace_setting_is_set_in_sql() -> None:
    db = fts.connect()
    db.sql("SET fts.gc_grace_seconds = 2.5")
    assert db.settings.get("fts.gc_grace_seconds") == 2.5


# ------------------------------------------------------------------ a second process

WRITER = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    import datafusion_fts as fts

    def body(i):
        return f"all w{i % 5}" + " pad" * (i % 3)

    db = fts.connect(sys.argv[1], config={"fts.gc_grace_seconds": 0})
    t = db.table("docs")
    n = t.count_rows()
    for step in range(int(sys.argv[2])):
        ids = range(n, n + 7)
        t.insert(pa.table({"id": pa.array(ids, pa.int64()), "body": [body(i) for i in ids]}))
        n += 7
        print(n, flush=True)  # acknowledged
        if step % 4 == 3:
            t.flush()
        if step % 8 == 7:
            t.optimize()
    """
)


def body(i: int) -> str:
    return f"all w{i % 5}" + " pad" * (i % 3)


class Child:
    """The writer process, and the acknowledged row counts it printed (read by a thread)."""

    def __init__(self, tmp_path: Path, path: Path, steps: int) -> None:
        script = tmp_path / "writer.py"
        script.write_text(WRITER)
        self.process = subprocess.Popen(
            [sys.executable, str(script), str(path), str(steps)], stdout=subprocess.PIPE, text=True
        )
        self.acknowledged = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.acknowledged = int(line)

    def wait(self) -> int:
        code = self.process.wait(timeout=120)
        self._thread.join(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return code


def check_cut(db: fts.Database, at_least: int) -> int:
    """One search's rows are a prefix of the writer's rows holding every row acknowledged
    before it started, with the right values; returns how many."""
    hits = db.table("docs").search(Match("body", "all"), limit=None, columns=["id", "body"])
    ids = sorted(hits.column("_rowid").to_pylist())
    assert ids == list(range(len(ids))) and len(ids) >= at_least
    assert hits.column("id").to_pylist() == hits.column("_rowid").to_pylist()  # (row ids are the ids)
    assert hits.column("body").to_pylist() == [body(i) for i in hits.column("id").to_pylist()]
    w3 = sorted(db.table("docs").search(Match("body", "w3"), limit=None, columns=[]).column("_rowid").to_pylist())
    assert w3 == [5 * k + 3 for k in range(len(w3))] and len(w3) >= len(range(3, len(ids), 5))  # a later cut
    return len(ids)


def new_table(path: Path) -> None:
    db = fts.connect(path)
    db.create_table("docs", pa.table({"id": pa.array([0], pa.int64()), "body": [body(0)]})).create_index("body")
    del db
    gc.collect()  # (as a process that closed it: its writer lock goes with it)


def test_a_reader_sees_another_process_write_while_it_reads(tmp_path: Path) -> None:
    path = tmp_path / "db"
    new_table(path)
    reader = fts.connect(path)  # a long-lived reader (as the sql shell)
    child = Child(tmp_path, path, steps=32)
    seen, queries = 0, 0
    while child.process.poll() is None:
        acknowledged = child.acknowledged
        n = check_cut(reader, acknowledged)
        assert n >= seen  # never back in time
        assert reader.sql("SELECT count(*) AS n FROM docs").to_pylist()[0]["n"] >= n
        seen, queries = n, queries + 1
    assert child.wait() == 0
    total = 1 + 7 * 32
    assert check_cut(reader, total) == total
    assert reader.sql("SELECT count(*) AS n FROM docs").to_pylist() == [{"n": total}]
    assert queries > 3  # (the reads did overlap the writes)
    assert view(reader) == view(fts.connect(path))


def test_a_reader_survives_the_writer_process_being_killed_and_takes_over(tmp_path: Path) -> None:
    path = tmp_path / "db"
    new_table(path)
    reader = fts.connect(path)
    child = Child(tmp_path, path, steps=1000)
    deadline = time.time() + 60
    while child.acknowledged < 1 + 7 * 10 and time.time() < deadline:
        check_cut(reader, child.acknowledged)
    os.kill(child.process.pid, signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    acknowledged = child.acknowledged
    assert check_cut(reader, acknowledged) in (acknowledged, acknowledged + 7)
    reader.table("docs").flush()  # the writer now: it adopts the log, torn tail cut
    # (+ 7: an insert durable in the log, killed before it returned, comes back as at a reopen)
    n = check_cut(reader, acknowledged)
    assert n in (acknowledged, acknowledged + 7)
    reader.table("docs").insert(pa.table({"id": pa.array([n], pa.int64()), "body": [body(n)]}))
    assert check_cut(reader, n + 1) == n + 1
    expected = view(reader)
    del reader
    gc.collect()  # (as a process that closed it: its writer lock goes with it)
    assert view(fts.connect(path)) == expected
