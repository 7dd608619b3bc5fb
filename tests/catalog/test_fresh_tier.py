"""The fresh tier (docs/design.md: "Fresh tier and visibility"; "Commits, garbage collection and
recovery"): acknowledged inserts are durable and searchable at once, moving rows between tiers never
changes a score, a crash loses no acknowledged write and keeps nothing half-written."""

from __future__ import annotations

import gc
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import RefTable, ref_search
from strategies import COLUMN_NAMES, QUERY_WORDS, query_trees, search_params, table_words, values

import datafusion_fts as fts
from datafusion_fts.index.fresh.fresh_runs import MAX_RUNS
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
    # Fresh rows have in-memory segments: the index plan covers them.
    assert t.snapshot().fresh and t.plan(QUERIES[0])[1].choice == "indexed"
    t.flush()  # committed, with the fresh segments persisted as index segments
    assert not t.snapshot().fresh
    assert t.snapshot().uncovered("body") == []
    assert hits(t) == fresh
    t.optimize()  # merged
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


# -- tier invariance, property-based -----------------------------------------------------

PLANS = ("auto", "indexed", "hybrid", "flat_scan")


def _check_every_plan(db: fts.Database, ref: RefTable, data) -> None:
    """Each query, under every plan that can answer it, equals the reference bit for bit."""
    t = db.table("docs")
    live = ref.live_row_ids()
    assert t.count_rows() == len(live)
    words = list(QUERY_WORDS) + table_words(ref) * 3
    for _ in range(data.draw(st.integers(1, 2), label="queries")):
        query = data.draw(query_trees(ref.columns, words, 2), label="query")
        params = data.draw(search_params(live), label="params")
        if params["limit"] == 0:
            params["limit"] = None
        expected = [(r, repr(s)) for r, s in ref_search(ref, query, **params)]
        for plan in PLANS:
            db.settings.set("fts.force_plan", plan)
            try:
                got = t.search(query, columns=[], include_row_ids=params["include_row_ids"],
                               limit=params["limit"], offset=params["offset"])
            except fts.PlanError:
                assert plan != "auto"
                continue
            assert [(r, repr(s)) for r, s in zip(got.column(0).to_pylist(), got.column(1).to_pylist())] \
                == expected, (plan, query, params)
        db.settings.set("fts.force_plan", "auto")


@settings(max_examples=25)  # (~0.5 s an example; HYPOTHESIS_PROFILE=thorough runs 600)
@given(st.data())
def test_tier_invariance_through_inserts_flushes_deletes_optimize_reindex_and_reopen(data):
    """Random rows inserted in batches of random sizes, interleaved with flush, delete,
    optimize, create_index (other options), build_segment and reopen: every plan answers
    exactly as the reference after every step (moving rows between tiers, merging fresh
    runs and persisting them never changes a score)."""
    columns = data.draw(st.lists(st.sampled_from(COLUMN_NAMES), min_size=1, max_size=2, unique=True),
                        label="columns")
    memtable = data.draw(st.sampled_from((5, 10**6, 10**6)), label="memtable_rows")
    ref = RefTable(rows={}, columns=list(columns))
    with tempfile.TemporaryDirectory() as path:
        config = {"fts.memtable_rows": memtable}
        db = fts.connect(path, config=config)
        db.create_table("docs", schema=pa.schema([(c, pa.string()) for c in columns]))
        first = ["create_index"] * data.draw(st.integers(0, len(columns)), label="indexes first")
        for step in range(len(first) + data.draw(st.integers(1, 7), label="steps")):
            t = db.table("docs")
            op = first[step] if step < len(first) else data.draw(st.sampled_from(
                ("insert",) * 5 + ("flush", "delete", "optimize", "create_index", "build_segment", "reopen")),
                label="op")
            if op == "insert":
                rows = data.draw(st.lists(st.fixed_dictionaries({c: values() for c in columns}),
                                          min_size=1, max_size=9), label="rows")
                for row in rows:
                    ref.rows[len(ref.rows)] = row
                t.insert(pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in columns}))
            elif op == "flush":
                t.flush()
            elif op == "delete" and ref.live_row_ids():
                gone = data.draw(st.lists(st.sampled_from(ref.live_row_ids()), max_size=3), label="deleted")
                if gone:
                    t.delete(f"_rowid IN ({', '.join(map(str, gone))})")
                    ref.deleted.update(gone)
            elif op == "optimize":
                t.optimize()
            elif op == "create_index":
                column = data.draw(st.sampled_from(columns), label="column")
                limit = data.draw(st.sampled_from((1, 5, 40)), label="max_token_length")
                k1, b = data.draw(st.sampled_from(((1.2, 0.75), (0.5, 1.0), (2.0, 0.0))), label="k1, b")
                t.create_index(column, max_token_length=limit, k1=k1, b=b,
                               positions=data.draw(st.booleans(), label="positions"))
                ref.max_token_length[column] = limit
                ref.params[column] = (k1, b)
            elif op == "build_segment" and ref.rows:
                column = data.draw(st.sampled_from(columns), label="column")
                lo = data.draw(st.integers(0, len(ref.rows) - 1), label="lo")
                hi = data.draw(st.integers(lo, len(ref.rows) + 3), label="hi")
                if column not in t.snapshot().meta.indexes:
                    ref.max_token_length.pop(column, None)
                    ref.params.pop(column, None)
                t.build_segment(column, (lo, hi))
            elif op == "reopen":
                del t
                db = None
                gc.collect()
                db = fts.connect(path, config=config)
            _check_every_plan(db, ref, data)
        db = None
        gc.collect()


def _ref_of(t: fts.Table) -> RefTable:
    rows = t.to_arrow()
    ids = rows.column("_rowid").to_pylist()
    ref = RefTable(rows={i: {"body": b} for i, b in zip(ids, rows.column("body").to_pylist())}, columns=["body"])
    ref.rows.update({i: {"body": None} for i in range(max(ids, default=-1) + 1) if i not in ref.rows})
    ref.deleted = {i for i in ref.rows if i not in set(ids)}
    return ref


def test_first_query_after_an_insert_tokenizes_only_the_inserted_rows():
    """Not a timing test: the rows tokenized per insert and per query are counted."""
    db = fts.connect()
    t = db.create_table("docs", docs(0, 200))
    t.create_index("body")
    for start in range(200, 1200, 100):
        t.insert(docs(start, 100))
    t.search(Match("body", "alpha"))
    before = dict(db.counters)
    t.insert(docs(1200, 3))
    assert db.counters["fresh_rows_tokenized"] - before.get("fresh_rows_tokenized", 0) == 3
    plan, request = t.plan(Match("body", "alpha beta"))
    assert request.choice == "indexed"
    assert "fresh-" in plan.tree()  # the fresh rows' in-memory segments are parts of the index
    t.search(Match("body", "alpha beta"))
    assert db.counters["tail_rows_tokenized"] == before.get("tail_rows_tokenized", 0) == 0
    assert db.counters["fresh_rows_tokenized"] - before.get("fresh_rows_tokenized", 0) == 3


def test_one_row_inserts_merge_into_logarithmically_many_runs():
    """Equal inserts count in base TIER (8); irregular ones stay under MAX_RUNS runs."""
    db = fts.connect()
    t = db.create_table("docs", docs(0, 5))
    t.create_index("body", positions=True)
    for start in range(5, 300):
        t.insert(docs(start, 1))
    runs = db.state.runs("docs")
    # 295 = 4·8² + 4·8 + 7: counting in base 8 (TIER), one run per unit
    assert [r.rows for r in runs] == [64] * 4 + [8] * 4 + [1] * 7
    assert db.counters["fresh_rows_tokenized"] == 295  # merging copies postings, never re-tokenizes
    ref = _ref_of(t)
    for query in QUERIES:
        expected = [(r, repr(s)) for r, s in ref_search(ref, query)]
        for plan in ("auto", "flat_scan"):
            db.settings.set("fts.force_plan", plan)
            got = t.search(query, limit=None, columns=[])
            assert list(zip(got.column(0).to_pylist(), map(repr, got.column(1).to_pylist()))) == expected
    db.settings.set("fts.force_plan", "auto")
    rng = random.Random(3)
    start = 300
    for _ in range(200):  # sizes falling and rising: no level lines up
        n = rng.choice((1, 2, 3, 17, 40, 90))
        t.insert(docs(start, n))
        start += n
    assert len(db.state.runs("docs")) <= MAX_RUNS
    ref = _ref_of(t)
    for query in QUERIES:
        got = t.search(query, limit=None, columns=[])
        expected = [(r, repr(s)) for r, s in ref_search(ref, query)]
        assert list(zip(got.column(0).to_pylist(), map(repr, got.column(1).to_pylist()))) == expected


def test_new_index_options_apply_to_fresh_rows(tmp_path):
    """Changing an index flushes the fresh tier first; later inserts are indexed with the
    new options (and a reopen re-tokenizes the log with them)."""
    db = fts.connect(tmp_path / "db")
    t = db.create_table("docs", pa.table({"body": ["alpha bb", "ccc alpha"]}))
    t.create_index("body")
    for limit in (2, 40, 1):
        t.insert(pa.table({"body": ["alpha alpha bb", "bb ccc", "ccc"]}))
        t.create_index("body", max_token_length=limit, positions=True)
        assert not t.snapshot().fresh
        t.insert(pa.table({"body": ["bb alpha", "ccc bb alpha"]}))
        for reopen in (False, True):
            if reopen:
                del t
                db = None
                gc.collect()
                db = fts.connect(tmp_path / "db")
                t = db.table("docs")
            assert len(t.snapshot().fresh) == 1
            ref = _ref_of(t)
            ref.max_token_length["body"] = limit
            for query in (Match("body", "alpha bb ccc"), Phrase("body", "alpha bb")):
                assert t.plan(query)[1].choice == "indexed"
                got = t.search(query, limit=None, columns=[])
                expected = [(r, repr(s)) for r, s in ref_search(ref, query)]
                assert list(zip(got.column(0).to_pylist(), map(repr, got.column(1).to_pylist()))) == expected
