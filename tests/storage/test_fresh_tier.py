"""The fresh tier (DESIGN §5.5, §7): acknowledged inserts are durable and searchable at
once, moving rows between tiers never changes a score, a crash loses no acknowledged
write and keeps nothing half-written."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.query import Boolean, Match, Phrase

WORDS = ["alpha", "beta", "gamma", "delta"]
QUERIES = [
    Match("body", "alpha beta"),
    Boolean(must=[Match("body", "gamma")], must_not=[Match("body", "delta")]),
    Phrase("body", "alpha beta"),
]


def docs(start: int, n: int) -> pa.Table:
    rng = random.Random(start)
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "body": [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(n)],
    })


def hits(t: fts.Table) -> list:
    out = []
    for q in QUERIES:
        r = t.search(q, limit=None, columns=["id"])
        out.append(list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist()), r.column(2).to_pylist())))
    return out


def test_moving_rows_between_tiers_never_changes_a_score(tmp_path):
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", docs(0, 40))
    t.create_index("body", positions=True)
    t.insert(docs(40, 7))
    t.insert(docs(47, 5))  # fresh rows on top of an index
    fresh = hits(t)
    assert t.snapshot().fresh and t.plan(QUERIES[0])[1].choice == "hybrid"
    t.flush()  # committed, unindexed tail
    assert not t.snapshot().fresh
    assert hits(t) == fresh
    t.optimize()  # indexed
    assert t.plan(QUERIES[0])[1].choice == "indexed"
    assert hits(t) == fresh
    db.settings.set("fts.force_plan", "flat_scan")
    assert hits(t) == fresh


def test_acknowledged_inserts_survive_a_reopen_without_flush(tmp_path):
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", docs(0, 10))
    t.create_index("body")
    t.insert(docs(10, 3))
    t.insert(docs(13, 2))
    before = hits(t)
    assert db.manifest.tables["docs"].next_rowid == 10  # nothing committed
    del db, t
    db = fts.connect(tmp_path / "db")
    t = db.table("docs")
    assert t.count_rows() == 15
    assert hits(t) == before
    assert db.sql("SELECT count(*) FROM docs").to_arrow_table().column(0)[0].as_py() == 15


def test_a_flush_before_a_crash_is_not_replayed_twice(tmp_path):
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", docs(0, 5))
    t.insert(docs(5, 3))
    log = tmp_path / "db" / "wal" / "docs.log"
    saved = log.read_bytes()
    t.flush()
    log.write_bytes(saved)  # as if the process died after the commit, before the truncate
    del db, t
    t = fts.connect(tmp_path / "db").table("docs")
    assert t.to_arrow().column("_rowid").to_pylist() == list(range(8))


def test_a_torn_last_record_is_dropped_and_the_rest_kept(tmp_path):
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", docs(0, 5))
    t.insert(docs(5, 2))
    log = tmp_path / "db" / "wal" / "docs.log"
    intact = log.stat().st_size
    t.insert(docs(7, 2))
    full = log.read_bytes()
    del db, t
    for cut in (intact + 3, intact + 9, len(full) - 1):  # mid-header, mid-payload, last byte
        log.write_bytes(full[:cut])
        t = fts.connect(tmp_path / "db").table("docs")
        assert t.to_arrow().column("id").to_pylist() == list(range(7))
        assert log.stat().st_size == intact  # the torn tail is cut away
        del t


CHILD = textwrap.dedent(
    """
    import sys
    import pyarrow as pa
    import datafusion_fts as fts
    db = fts.connect(sys.argv[1])
    t = db.table("docs")
    n = int(sys.argv[2])
    while True:
        # one insert = 3 rows sharing a batch number: all or nothing
        t.insert(pa.table({"id": pa.array([n, n, n], pa.int64()), "body": ["alpha", "beta", "alpha beta"]}))
        print(n, flush=True)
        n += 1
    """
)


def test_sigkill_loses_no_acknowledged_insert_and_keeps_nothing_half(tmp_path):
    path = tmp_path / "db"
    db = fts.connect(path)
    db.create_table("docs", pa.table({"id": pa.array([], pa.int64()), "body": pa.array([], pa.string())}))
    del db
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    acknowledged: set[int] = set()
    rng = random.Random(7)
    next_batch = 0
    for _ in range(4):
        with subprocess.Popen(
            [sys.executable, str(script), str(path), str(next_batch)], stdout=subprocess.PIPE, text=True
        ) as child:
            assert child.stdout is not None
            deadline = time.time() + 60
            seen = 0
            target = rng.randint(3, 25)
            while seen < target and time.time() < deadline:
                line = child.stdout.readline()
                if not line:
                    break
                acknowledged.add(int(line))
                seen += 1
            time.sleep(rng.random() * 0.05)
            child.send_signal(signal.SIGKILL)
            rest = child.stdout.read()
            child.wait()
        acknowledged.update(int(x) for x in rest.split())
        t = fts.connect(path).table("docs")
        ids = t.to_arrow().column("id").to_pylist()
        counts = {b: ids.count(b) for b in set(ids)}
        assert all(c == 3 for c in counts.values()), "a half-written insert survived"
        assert acknowledged <= set(counts), "an acknowledged insert was lost"
        assert len(ids) == len(set(t.to_arrow().column("_rowid").to_pylist()))
        found = t.search(Match("body", "alpha"), limit=None, columns=["id"]).column("id").to_pylist()
        assert set(found) == set(counts)
        next_batch = max(counts, default=-1) + 1
        del t


def test_queries_during_inserts_see_a_consistent_cut():
    db = fts.connect()
    t = db.create_table("docs", pa.table({"id": pa.array([0], pa.int64()), "body": ["alpha"]}))
    t.create_index("body")
    errors: list[BaseException] = []
    stop = threading.Event()

    def writer(offset: int) -> None:
        try:
            for i in range(40):
                t.insert(pa.table({"id": pa.array([offset + i], pa.int64()), "body": ["alpha beta"]}))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        try:
            while not stop.is_set():
                rows = sorted(t.search(Match("body", "alpha"), limit=None, columns=[]).column(0).to_pylist())
                # Every row matches and ids are handed out in order: a cut is a prefix.
                assert rows == list(range(len(rows))), rows
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=reader) for _ in range(2)]
    writers = [threading.Thread(target=writer, args=(1000 * (w + 1),)) for w in range(3)]
    for th in readers + writers:
        th.start()
    for th in writers:
        th.join()
    stop.set()
    for th in readers:
        th.join()
    assert not errors, errors[0]
    assert t.count_rows() == 121


def test_concurrent_scans_of_one_directory_database(tmp_path):
    """Several threads scanning the same fragments through one connection (pyarrow's
    ParquetFile is not thread-safe: each scan must have its own reader)."""
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", pa.table({"body": [f"alpha {i} beta" for i in range(60_000)]}))
    db.settings.set("fts.force_plan", "flat_scan")
    expected = t.search(Match("body", "alpha 7"), limit=5, columns=["body"])
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for _ in range(2):
                assert t.search(Match("body", "alpha 7"), limit=5, columns=["body"]) == expected
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
