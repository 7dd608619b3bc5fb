"""SQL benchmark (issue 3): ``db.sql`` end to end vs ``t.search``, and SQLite FTS5, in one run.

On the seeded Zipf corpus of ``benchmarks/corpus.py`` (the same Parquet file and the same
built database ``bench-data/fts-<n>/`` as ``bench_core.py``: table ``docs(id, title, body)``
with an index on ``body``):

1. **SQL vs the Python API.** The same query string through
   ``db.sql("SELECT _rowid, score() FROM docs WHERE MATCH(body, '<q>') ORDER BY score() DESC
   LIMIT k").to_arrow_table()`` and through ``t.search(parse('<q>', ['body']), limit=k,
   columns=[])``; then the same with stored columns (``SELECT id, title, score() ...`` vs
   ``columns=['id', 'title']``). The SQL overhead is p50(SQL) - p50(t.search).
2. **SQLite FTS5** (stdlib ``sqlite3``): ``CREATE VIRTUAL TABLE docs USING fts5(body,
   tokenize='unicode61')`` over the same bodies with rowid = our ``_rowid``, built in a fresh
   subprocess; queried with ``SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY
   bm25(docs) LIMIT k`` and the equivalent FTS5 syntax.
3. A phase breakdown of the SQL path (parse, lowering, search, result registration,
   DataFusion planning, DataFusion execution), taken by wrapping the calls of
   ``datafusion_fts.sql.search.execute`` from this script (nothing in ``src/`` is changed).

All systems run in this process; every query runs once as a warm-up, then ``--repeats`` timed
passes; within a pass each system answers a class's queries in a block of its own (a SQL call
scans the table and evicts the CPU caches, which would slow an interleaved ``t.search``).

Usage::

    python benchmarks/bench_sql.py                  # 1,000,000 rows
    python benchmarks/bench_sql.py --rows 100000    # quick run
    python benchmarks/bench_sql.py --skip-build     # reuse bench-data/sqlite-<n>.db too

``bench-data/fts-<n>/`` is reused whenever it exists (build it with ``bench_core.py``; it is
built here the same way when missing). The markdown report is printed and written to
``docs/benchmarks.md`` under ``## SQL (issue 3)`` (only that section is replaced).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import re
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core as bc  # noqa: E402  (shared helpers: machine info, load, corpus query sets)
import common  # noqa: E402  (child processes, git state, load average, FTS5 query texts)

ROOT = HERE.parent
DATA = ROOT / "bench-data"
DOCS = ROOT / "docs" / "benchmarks.md"
SECTION = "## SQL (issue 3)"
SEED = bc.SEED
FIELD = "body"
TABLE = "docs"
KS = (10, 100)
CLASSES = ("frequent", "rare", "or2", "and2", "must_not")
AGREEMENT_QUERIES = 20
COUNT_CHECKS_PER_CLASS = 5
BREAKDOWN_QUERIES = 10  # per class, k=10, both SQL variants
TARGET_MS = 3.0
SQLITE_BATCH = 65_536
ABSENT = "qqqqqqqqqqqqqqqqqqqq"  # longer than any vocabulary word: 0 matches

# ours: the query string inside MATCH(body, '...') and parse(...); FTS5: the MATCH operand.
CLASS_DOC = {
    "frequent": ("1 frequent term", "`a`", "`a`"),
    "rare": ("1 rare term", "`a`", "`a`"),
    "or2": ("2-term OR (frequent + medium)", "`a b`", "`a OR b`"),
    "and2": ("2-term AND (2 medium)", "`+a +b`", "`a AND b`"),
    "must_not": ("medium MUST + frequent MUST_NOT", "`+a -b`", "`a NOT b`"),
}

SYSTEMS = ("search", "sql", "search_cols", "sql_cols", "sqlite")


def _paths(n_rows: int, corpus_name: str = "synthetic") -> dict[str, Path]:
    key = bc.stem(n_rows, corpus_name)
    return {
        "parquet": DATA / f"corpus-{key}.parquet",
        "ours": DATA / f"fts-{key}",
        "sqlite": DATA / f"sqlite-{key}.db",
        "core_build_json": DATA / f"bench-core-build-{key}.json",
        "build_json": DATA / f"bench-sql-build-{key}.json",
    }


def _log(msg: str) -> None:
    print(f"[bench_sql {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# -- queries --------------------------------------------------------------------------------
def _query_sets(n_queries: int) -> dict[str, list[tuple[str, ...]]]:
    """bench_core's term tuples for the classes measured here (identical terms)."""
    sets = bc._query_sets(n_queries)
    return {cls: sets[cls] for cls in CLASSES}


def _sql_rowid(q: str, k: int) -> str:
    return f"SELECT _rowid, score() FROM docs WHERE MATCH(body, '{q}') ORDER BY score() DESC LIMIT {k}"


def _sql_cols(q: str, k: int) -> str:
    return f"SELECT id, title, score() FROM docs WHERE MATCH(body, '{q}') ORDER BY score() DESC LIMIT {k}"


def _sqlite_sql(k: int) -> str:
    return f"SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT {k}"


# -- SQLite FTS5 ----------------------------------------------------------------------------
def _fts5_info() -> dict:
    con = sqlite3.connect(":memory:")
    options = [r[0] for r in con.execute("PRAGMA compile_options")]
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        works = True
    except sqlite3.OperationalError:
        works = False
    con.close()
    return {"version": sqlite3.sqlite_version, "fts5_option": "ENABLE_FTS5" in options, "fts5_works": works}


def _child_sqlite(n_rows: int, corpus_name: str = "synthetic") -> dict:
    import pyarrow.parquet as pq

    paths = _paths(n_rows, corpus_name)
    path = paths["sqlite"]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    for p in (path, tmp):
        p.unlink(missing_ok=True)
    rss_base = bc._peak_rss_mb()
    cpu0 = bc._cpu_s()
    t0 = time.perf_counter()
    con = sqlite3.connect(tmp, isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute(f"CREATE VIRTUAL TABLE {TABLE} USING fts5({FIELD}, tokenize='unicode61')")
    con.execute("BEGIN")
    rowid = 0
    for batch in pq.ParquetFile(paths["parquet"]).iter_batches(batch_size=SQLITE_BATCH, columns=[FIELD]):
        bodies = batch.column(0).to_pylist()
        con.executemany(f"INSERT INTO {TABLE}(rowid, {FIELD}) VALUES (?, ?)",
                        zip(range(rowid, rowid + len(bodies)), bodies))
        rowid += len(bodies)
    con.execute("COMMIT")
    t1 = time.perf_counter()
    size_before = tmp.stat().st_size
    con.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('optimize')")
    t2 = time.perf_counter()
    count = con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
    con.close()
    assert rowid == n_rows == count, (rowid, n_rows, count)
    os.replace(tmp, path)
    return {
        "insert_s": t1 - t0,
        "optimize_s": t2 - t1,
        "total_s": t2 - t0,
        "cpu_s": bc._cpu_s() - cpu0,
        "rss_base_mb": rss_base,
        "peak_rss_mb": bc._peak_rss_mb(),
        "size_before_optimize_mb": size_before / 1e6,
        "disk_mb": path.stat().st_size / 1e6,
    }


def _run_sqlite_child(n_rows: int, corpus_name: str = "synthetic") -> dict:
    _log(f"building the SQLite FTS5 table over {n_rows:,} rows in a fresh subprocess ...")
    return common.run_child(__file__, ["--child", "sqlite", "--rows", str(n_rows), "--corpus", corpus_name], _log)


# -- phase breakdown of db.sql --------------------------------------------------------------
class _Instrument:
    """Times the steps of ``SqlSession`` by wrapping them (restored on exit).

    Phases: ``parse`` (sqlglot, ``parse_sql``), ``lower`` (``SqlSession._plan``: copy and
    lower the statement), ``search`` (``_run_search``: plan + execute the search),
    ``register`` (``_register_result``), ``df_plan`` (``ctx.sql`` of the rewritten statement:
    DataFusion SQL parsing and logical planning). The caller times ``execute``
    (``.to_arrow_table()``: optimisation, physical planning, execution).
    """

    def __init__(self, db) -> None:
        self.db = db
        self.times: dict[str, float] = defaultdict(float)
        self.capture_explain = False
        self.explain: str | None = None
        self.rewritten: str | None = None
        self.minimal_ms: float | None = None

    def _wrap(self, name: str, fn):
        times = self.times

        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                times[name] += time.perf_counter() - t0

        return wrapper

    def __enter__(self) -> "_Instrument":
        from datafusion_fts.sql.search import execute as ex

        self.ex = ex
        self.saved = {name: getattr(ex.SqlSession, name) for name in ("_plan", "_run_search", "_register_result")}
        self.saved_parse = ex.parse_sql
        ex.parse_sql = self._wrap("parse", ex.parse_sql)
        ex.SqlSession._plan = self._wrap("lower", self.saved["_plan"])
        ex.SqlSession._run_search = self._wrap("search", self.saved["_run_search"])
        ex.SqlSession._register_result = self._wrap("register", self.saved["_register_result"])
        ctx = self.db.ctx
        orig_sql = ctx.sql
        timed_sql = self._wrap("df_plan", orig_sql)

        def ctx_sql(text, *args, **kwargs):
            if self.capture_explain and self.explain is None:
                # The search result is registered right now: EXPLAIN ANALYZE what DataFusion runs.
                self.rewritten = text
                plan = orig_sql("EXPLAIN ANALYZE " + text).to_arrow_table()
                self.explain = plan.column(1)[0].as_py()
                # The cheapest DataFusion round trip over the same registered hits (no table scan).
                name = re.search(r"__fts_result_\d+", text)
                if name is not None:
                    xs = []
                    for rep in range(21):
                        t0 = time.perf_counter()
                        orig_sql(f'SELECT _rowid, _score FROM "{name.group(0)}" '
                                 "ORDER BY _score DESC, _rowid ASC LIMIT 10").to_arrow_table()
                        if rep:
                            xs.append((time.perf_counter() - t0) * 1e3)
                    self.minimal_ms = bc._pct(xs, 50)
            return timed_sql(text, *args, **kwargs)

        ctx.sql = ctx_sql
        return self

    def __exit__(self, *exc: object) -> None:
        ex = self.ex
        ex.parse_sql = self.saved_parse
        for name, fn in self.saved.items():
            setattr(ex.SqlSession, name, fn)
        del self.db.ctx.sql  # drop the instance attribute: the class method shows again

    def take(self) -> dict[str, float]:
        out = dict(self.times)
        self.times.clear()
        return out


_KEEP_METRICS = ("output_rows", "input_rows", "build_input_rows", "elapsed_compute", "join_time", "fetch_time")


def _short_plan(text: str) -> str:
    """The physical plan with each operator's metrics cut to a few telling ones."""
    out = []
    for line in text.splitlines():
        m = re.search(r",?\s*metrics=\[(.*)\]\s*$", line)
        if m is None:
            out.append(line.rstrip())
            continue
        head = line[: m.start()].rstrip()
        metrics = dict(kv.split("=", 1) for kv in re.split(r", (?=[a-z_0-9]+=)", m.group(1)) if "=" in kv)
        kept = [f"{k}={metrics[k]}" for k in _KEEP_METRICS if k in metrics]
        if len(head) > 150:
            head = head[:147] + "..."
        out.append(head + (f"  [{', '.join(kept)}]" if kept else ""))
    return "\n".join(out)


# -- the benchmark ------------------------------------------------------------------------
def _ensure_ours(n_rows: int) -> str:
    paths = _paths(n_rows)
    if (paths["ours"] / "manifest.json").exists():
        return f"reused `bench-data/fts-{n_rows}/` (built by `bench_core.py`)"
    _log(f"{paths['ours']} is missing: building it the way bench_core.py does ...")
    result = bc._run_child("ours", n_rows)
    return (f"built here by `bench_core`'s build child (load+index {result['total_s']:.1f} s) because "
            f"`bench-data/fts-{n_rows}/` was missing")


def _search_bench(n_rows: int, n_queries: int, repeats: int) -> dict:
    import datafusion_fts as fts
    from datafusion_fts.query.parser import parse
    from datafusion_fts.session.catalog import rows_name

    paths = _paths(n_rows)
    sets = _query_sets(n_queries)

    t0 = time.perf_counter()
    db = fts.connect(paths["ours"])
    table = db.table(TABLE)
    ours_open_s = time.perf_counter() - t0
    assert table.count_rows() == n_rows, (table.count_rows(), n_rows)
    con = sqlite3.connect(paths["sqlite"])
    sqlite_rows = con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
    assert sqlite_rows == n_rows, (sqlite_rows, n_rows)
    sqlite_pragmas = {p: con.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "cache_size", "mmap_size")}

    queries = {
        cls: [(terms, common.our_text(cls, terms), parse(common.our_text(cls, terms), [FIELD]), common.fts5_text(cls, terms))
              for terms in term_list]
        for cls, term_list in sets.items()
    }

    # First calls (sqlglot/DataFusion planning paths cold; index segments loaded by the first search).
    _, q0, tree0, f0 = queries["frequent"][0]
    first = {}
    t0 = time.perf_counter()
    db.sql(_sql_rowid(q0, 10)).to_arrow_table()
    first["sql"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    table.search(tree0, limit=10, columns=[])
    first["search"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    con.execute(_sqlite_sql(10), (f0,)).fetchall()
    first["sqlite"] = time.perf_counter() - t0

    # Match counts: ours for every query, SQLite for a few per class (untimed).
    all_counts = {cls: [table.search(tree, limit=None, columns=[]).num_rows for _, _, tree, _ in qs]
                  for cls, qs in queries.items()}
    counts = {}
    for cls, qs in queries.items():
        for j, (_, _, _, fq) in enumerate(qs[:COUNT_CHECKS_PER_CLASS]):
            sq_n = con.execute(f"SELECT count(*) FROM {TABLE} WHERE {TABLE} MATCH ?", (fq,)).fetchone()[0]
            counts.setdefault(cls, []).append((all_counts[cls][j], sq_n))

    samples = {(cls, k, s): [] for cls in queries for k in KS for s in SYSTEMS}
    mismatches: list[str] = []
    checked = 0

    def call(system: str, k: int, q: str, tree, fq: str):
        if system == "search":
            return table.search(tree, limit=k, columns=[])
        if system == "sql":
            return db.sql(_sql_rowid(q, k)).to_arrow_table()
        if system == "search_cols":
            return table.search(tree, limit=k, columns=["id", "title"])
        if system == "sql_cols":
            return db.sql(_sql_cols(q, k)).to_arrow_table()
        return con.execute(_sqlite_sql(k), (fq,)).fetchall()

    def run_pass(record: bool, check: bool) -> None:
        """Per class and k, each system answers all the class's queries in a block of its own.

        Not interleaved query by query: a SQL call scans the whole table and evicts the CPU
        caches, which would slow the next ``t.search`` call (measured separately below)."""
        nonlocal checked
        perf = time.perf_counter_ns
        for cls, qs in queries.items():
            for k in KS:
                results = {}
                for system in SYSTEMS:
                    out = samples[(cls, k, system)]
                    for j, (_terms, q, tree, fq) in enumerate(qs):
                        a = perf()
                        r = call(system, k, q, tree, fq)
                        b = perf()
                        if record:
                            out.append((b - a) / 1e6)
                        if check:
                            results[(system, j)] = r
                if check:
                    for j, (_terms, q, _tree, _fq) in enumerate(qs):
                        checked += 1
                        r_search, r_sql = results[("search", j)], results[("sql", j)]
                        r_search_cols, r_sql_cols = results[("search_cols", j)], results[("sql_cols", j)]
                        same = (r_sql.column(0).to_pylist() == r_search.column("_rowid").to_pylist()
                                and r_sql.column(1).to_pylist() == r_search.column("_score").to_pylist()
                                and r_sql_cols.column("id").to_pylist() == r_search_cols.column("id").to_pylist()
                                and r_sql_cols.column("title").to_pylist() == r_search_cols.column("title").to_pylist())
                        if not same:
                            mismatches.append(f"{cls} k={k} {q!r}")

    # Per-call floor: a term absent from the index (0 matches), each system in its own block.
    floor_tree = parse(ABSENT, [FIELD])
    floor = {}
    for system in SYSTEMS:
        xs = []
        for rep_i in range(5 * n_queries):
            a = time.perf_counter_ns()
            call(system, 10, ABSENT, floor_tree, f'"{ABSENT}"')
            if rep_i >= n_queries:  # the first n_queries calls are warm-up
                xs.append((time.perf_counter_ns() - a) / 1e6)
        floor[system] = xs

    # Cache effect: rare-term t.search alone vs right after a SQL call (which scans the table).
    rare = queries["rare"]
    cache = {"alone": [], "after_sql": []}
    for rep in range(3):
        for _terms, q, tree, _fq in rare:
            a = time.perf_counter_ns()
            table.search(tree, limit=10, columns=[])
            cache["alone"].append((time.perf_counter_ns() - a) / 1e6)
        for _terms, q, tree, _fq in rare:
            db.sql(_sql_rowid(q, 10)).to_arrow_table()
            a = time.perf_counter_ns()
            table.search(tree, limit=10, columns=[])
            cache["after_sql"].append((time.perf_counter_ns() - a) / 1e6)

    _log("search: warm-up pass (also checks SQL == t.search) ...")
    run_pass(record=False, check=True)
    for r in range(repeats):
        _log(f"search: timed pass {r + 1}/{repeats} ...")
        gc.collect()
        run_pass(record=True, check=False)

    latency = {}
    for cls in queries:
        for k in KS:
            latency[f"{cls}@{k}"] = {
                s: {"p50": bc._pct(samples[(cls, k, s)], 50), "p95": bc._pct(samples[(cls, k, s)], 95)}
                for s in SYSTEMS
            }

    # Agreement with FTS5: top-10 overlap, round-robin over classes.
    picks: list[tuple[str, int]] = []
    i = 0
    while len(picks) < min(AGREEMENT_QUERIES, n_queries * len(queries)):
        for cls in queries:
            if len(picks) < AGREEMENT_QUERIES and i < n_queries:
                picks.append((cls, i))
        i += 1
    agreement = []
    for cls, j in picks:
        terms, q, tree, fq = queries[cls][j]
        ours = db.sql(_sql_rowid(q, 10)).to_arrow_table()
        ours_ids = ours.column(0).to_pylist()
        ours_scores = ours.column(1).to_pylist()
        rows = con.execute(_sqlite_sql(10), (fq,)).fetchall()
        sq_ids = [r[0] for r in rows]
        # The same query with ours' tie-break (rowid ascending) added.
        rows_tb = con.execute(
            "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT 10", (fq,)
        ).fetchall()
        sq_tb_ids = [r[0] for r in rows_tb]

        def overlap(x: list, y: list) -> float:
            denom = max(len(x), len(y))
            return 1.0 if denom == 0 else len(set(x) & set(y)) / denom

        rel = None
        if ours_scores and rows:
            rel = abs(ours_scores[0] + rows[0][1]) / max(abs(ours_scores[0]), 1e-12)
        agreement.append({"class": cls, "terms": list(terms), "overlap": overlap(ours_ids, sq_ids),
                          "overlap_tiebreak": overlap(ours_ids, sq_tb_ids), "top1_rel_diff": rel})

    # Phase breakdown of the SQL path (instrumented runs, not the timings above).
    _log("breakdown: instrumented SQL runs ...")
    phases = ("parse", "lower", "search", "register", "df_plan", "execute", "other")
    breakdown = {}
    explain = {}
    with _Instrument(db) as ins:
        for variant, make in (("sql", _sql_rowid), ("sql_cols", _sql_cols)):
            _, q, _, _ = queries["or2"][0]
            ins.capture_explain, ins.explain = True, None
            db.sql(make(q, 10)).to_arrow_table()
            ins.capture_explain = False
            explain[variant] = {"rewritten": ins.rewritten, "plan": _short_plan(ins.explain or ""),
                                "minimal_ms": ins.minimal_ms}
            ins.take()
            for cls, qs in queries.items():
                rows = defaultdict(list)
                for rep in range(4):  # one warm-up round, three recorded
                    for _, q, _, _ in qs[:BREAKDOWN_QUERIES]:
                        text = make(q, 10)
                        t0 = time.perf_counter()
                        df = db.sql(text)
                        t1 = time.perf_counter()
                        df.to_arrow_table()
                        t2 = time.perf_counter()
                        got = ins.take()
                        if rep == 0:
                            continue
                        got["execute"] = t2 - t1
                        got["other"] = (t1 - t0) - sum(got.get(p, 0.0) for p in
                                                       ("parse", "lower", "search", "register", "df_plan"))
                        got["total"] = t2 - t0
                        for p in (*phases, "total"):
                            rows[p].append(got.get(p, 0.0) * 1e3)
                breakdown[f"{variant}/{cls}"] = {p: bc._pct(v, 50) for p, v in rows.items()}
    # DataFusion alone: a plain scan of what the rewritten statement's join probes.
    scans = {}
    rows = f'"{rows_name(TABLE)}"'  # (the table with its _rowid, which its own name hides)
    for name, text in (("rowid", f"SELECT _rowid FROM {rows}"), ("rowid_id_title", f"SELECT _rowid, id, title FROM {rows}")):
        xs = []
        for rep in range(6):
            t0 = time.perf_counter()
            db.ctx.sql(text).to_arrow_table()
            if rep:
                xs.append((time.perf_counter() - t0) * 1e3)
        scans[name] = bc._pct(xs, 50)
    con.close()
    return {
        "ours_open_s": ours_open_s,
        "first": first,
        "sqlite_pragmas": sqlite_pragmas,
        "counts": counts,
        "all_counts": all_counts,
        "checked": checked,
        "mismatches": mismatches,
        "floor": {s: bc._pct(v, 50) for s, v in floor.items()},
        "cache": {s: bc._pct(v, 50) for s, v in cache.items()},
        "latency": latency,
        "agreement": agreement,
        "breakdown": breakdown,
        "explain": explain,
        "scans": scans,
    }


# -- report -------------------------------------------------------------------------------
_f = bc._fmt_ms


def _report(args, n_rows: int, env: dict, build: dict, build_note: str, s: dict) -> str:
    import corpus

    lines: list[str] = [SECTION, ""]
    add = lines.append
    add(f"Generated by `python benchmarks/bench_sql.py --rows {n_rows} --queries {args.queries} "
        f"--repeats {args.repeats}{' --skip-build' if args.skip_build else ''}` on {env['date']}.")
    add("")
    add("### Setup")
    add("")
    m = env["machine"]
    add(f"- **Machine**: {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}")
    add(f"- **Load average** (1/5/15 min): at start {env['load_start']}, before search {env['load_search']}, "
        f"at end {env['load_end']}.")
    add(f"- **Other processes' CPU** (machine-wide /proc/stat busy time minus this benchmark's own): "
        f"during the SQLite build {env['other_build']}; during the search phase {env['other_search']}. "
        "Anything well above 0 means the numbers were taken on a shared, busy machine (2 cores: "
        "≈1 core of other load can slow a single-threaded caller too, through DataFusion's 2 "
        "partitions, the memory bus and the scheduler).")
    add(f"- **Code**: commit {env['git']} when the search phase imported it.")
    add(f"- **Python** {m['python']}; " + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + f"; SQLite {env['fts5']['version']} (stdlib `sqlite3`, ENABLE_FTS5 compiled in: "
        f"{'yes' if env['fts5']['fts5_option'] else 'no'}, `CREATE VIRTUAL TABLE ... USING fts5` works: "
        f"{'yes' if env['fts5']['fts5_works'] else 'no'})")
    add(f"- **Corpus**: `bench-data/corpus-{n_rows}.parquet` ({env['parquet_mb']:.1f} MB), the seeded Zipf "
        f"corpus of `benchmarks/corpus.py` (seed {SEED}, {corpus.VOCAB_SIZE:,}-word vocabulary, bodies "
        f"~{corpus.BODY_MEAN_WORDS:.0f} words), the same as the engine-core section.")
    add(f"- **Ours**: {env['ours_note']}: table `docs(id, title, body)`, index on `body` "
        "(BM25 k1=1.2, b=0.75). Opened with `fts.connect(dir)` "
        f"({s['ours_open_s'] * 1e3:.0f} ms) in this process.")
    pr = s["sqlite_pragmas"]
    add(f"- **SQLite FTS5**: `bench-data/sqlite-{n_rows}.db`, `CREATE VIRTUAL TABLE docs USING fts5(body, "
        "tokenize='unicode61')` (default `detail=full`, i.e. **with positions**; BM25 k1=1.2, b=0.75 "
        "fixed in `bm25()`), rowid = our `_rowid`. Queried on one connection with default settings "
        f"(page_size {pr['page_size']}, cache_size {pr['cache_size']}, mmap_size {pr['mmap_size']}); "
        "the OS page cache holds the file.")
    add("")

    # -- 1. SQL vs t.search
    add("### SQL end to end vs `t.search`")
    add("")
    add(f"{args.queries} distinct queries per class (bench_core's terms: frequent band = ranks 0-99, medium = "
        "1,000-9,999, rare = 50,000-149,999), each at k=10 and k=100; one warm-up pass over all queries, then "
        f"{args.repeats} timed pass(es); within a pass, for each class and k, each system answers the "
        f"class's {args.queries} queries in a block of its own; p50/p95 over all "
        f"{args.queries * args.repeats} timings of a class and k. Milliseconds, single-threaded caller.")
    add("")
    add("- **SQL**: `db.sql(\"SELECT _rowid, score() FROM docs WHERE MATCH(body, '<q>') ORDER BY score() DESC "
        "LIMIT k\").to_arrow_table()`, timed from the call until the Arrow table is returned.")
    add("- **t.search**: `t.search(parse('<q>', ['body']), limit=k, columns=[])`, the tree parsed once "
        "beforehand (the SQL path parses it on every call).")
    add("- **+ columns**: `SELECT id, title, score() ...` vs `t.search(..., columns=['id', 'title'])`.")
    add("- **overhead** = p50(SQL) - p50(t.search) of the same class and k.")
    ca = s["cache"]
    add(f"- Why blocks, not query-by-query interleaving: every SQL call scans the whole table (below), "
        f"which evicts the CPU caches; a rare-term `t.search` takes {_f(ca['alone'])} ms p50 in a run of its own "
        f"but {_f(ca['after_sql'])} ms right after a `db.sql` call, so interleaving would inflate the "
        "`t.search` baseline.")
    add("")
    for variant, api, label in (("sql", "search", "`_rowid, score()`"), ("sql_cols", "search_cols", "`id, title, score()`")):
        add(f"**Selecting {label}:**")
        add("")
        add("| class | query | k | matches p50 / max | t.search p50 | p95 | SQL p50 | p95 | **SQL overhead p50** |")
        add("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for cls in CLASSES:
            label_c, form, _ = CLASS_DOC[cls]
            cnt = s["all_counts"][cls]
            matches = f"{bc._pct(cnt, 50):,.0f} / {max(cnt):,}"
            for k in KS:
                row = s["latency"][f"{cls}@{k}"]
                a, q = row[api], row[variant]
                add(f"| {label_c} | {form} | {k} | {matches} | {_f(a['p50'])} | {_f(a['p95'])} | "
                    f"{_f(q['p50'])} | {_f(q['p95'])} | **{q['p50'] - a['p50']:+.2f}** |")
        fl = s["floor"]
        add(f"| term absent from the index | `{ABSENT[:4]}…` | 10 | 0 / 0 | {_f(fl[api])} | | {_f(fl[variant])} | | "
            f"**{fl[variant] - fl[api]:+.2f}** |")
        add("")
    verdict = []
    for variant, api, label in (("sql", "search", "`_rowid, score()`"), ("sql_cols", "search_cols", "`id, title, score()`")):
        over = [s["latency"][f"{c}@{k}"][variant]["p50"] - s["latency"][f"{c}@{k}"][api]["p50"]
                for c in CLASSES for k in KS]
        met = sum(1 for o in over if o <= TARGET_MS)
        verdict.append(f"{label}: {met}/{len(over)} class×k rows within {TARGET_MS:g} ms "
                       f"(overhead p50 {min(over):.2f} to {max(over):.2f} ms)")
    all_met = all(f" {2 * len(CLASSES)}/{2 * len(CLASSES)} " in v for v in verdict)
    add(f"**Target ≤ {TARGET_MS:g} ms p50 SQL overhead: {'met' if all_met else 'NOT met'}** — " + "; ".join(verdict) + ".")
    add("")

    # -- breakdown
    add("### Where the SQL time goes")
    add("")
    add(f"Instrumented runs ({BREAKDOWN_QUERIES} queries per class, k=10, one warm-up round and three recorded; "
        "p50 per phase in ms, so the phases need not add up exactly to the total). The script wraps "
        "`datafusion_fts.sql.search.execute`'s steps with timers; nothing in `src/` is changed. *parse*: sqlglot "
        "`parse_sql`; *lower*: `SqlSession._plan` (copy the statement, lower MATCH into a search and rewrite "
        "the SELECT); *search*: `_run_search` (the same planner and operators as `t.search`, without "
        "fetching columns); *register*: `_register_result` (the hits as a DataFusion table); *df plan*: "
        "`ctx.sql(rewritten)` (DataFusion SQL parsing + logical plan); *execute*: `.to_arrow_table()` "
        "(DataFusion optimisation, physical planning and execution); *other*: the rest of `db.sql` "
        "(SqlSession creation, generating the rewritten SQL text, deregistering).")
    add("")
    add("| select | class | parse | lower | search | register | df plan | execute | other | total |")
    add("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for variant, label in (("sql", "`_rowid, score()`"), ("sql_cols", "`id, title, score()`")):
        for cls in CLASSES:
            b = s["breakdown"][f"{variant}/{cls}"]
            add(f"| {label} | {CLASS_DOC[cls][0]} | " + " | ".join(
                _f(b[p]) for p in ("parse", "lower", "search", "register", "df_plan", "execute", "other", "total")) + " |")
    add("")
    sc = s["scans"]
    add(f"For scale, DataFusion alone: `SELECT _rowid FROM docs` takes {_f(sc['rowid'])} ms and "
        f"`SELECT _rowid, id, title FROM docs` {_f(sc['rowid_id_title'])} ms (p50 of 5, full scans of "
        f"{n_rows:,} rows).")
    mins = [s["explain"][v]["minimal_ms"] for v in ("sql", "sql_cols") if s["explain"][v]["minimal_ms"] is not None]
    if mins:
        add(f"The cheapest DataFusion round trip over the same registered hits, `ctx.sql('SELECT _rowid, _score "
            f"FROM <hits> ORDER BY _score DESC, _rowid ASC LIMIT 10').to_arrow_table()` (no scan of `docs`), "
            f"takes {_f(min(mins))} ms (p50 of 20).")
    add("")
    for variant in ("sql", "sql_cols"):
        ex = s["explain"][variant]
        add(f"Rewritten statement DataFusion runs for `{'SELECT _rowid, score()' if variant == 'sql' else 'SELECT id, title, score()'} ... "
            f"LIMIT 10` (an OR query), and its `EXPLAIN ANALYZE` (metrics trimmed):")
        add("")
        add("```sql")
        add(ex["rewritten"] or "(not captured)")
        add("```")
        add("")
        add("```text")
        add(ex["plan"] or "(not captured)")
        add("```")
        add("")

    # -- 2. SQLite FTS5
    add("### SQLite FTS5")
    add("")
    if build_note:
        add(build_note)
        add("")
    sb = build["sqlite"]
    add("Build in a fresh subprocess: bodies streamed from the Parquet file in 64k-row batches, "
        "`executemany(\"INSERT INTO docs(rowid, body) VALUES (?, ?)\")` in one transaction with "
        "`journal_mode=OFF`, `synchronous=OFF`, then `INSERT INTO docs(docs) VALUES('optimize')` "
        "(merges the FTS5 b-tree segments into one; searches run on the optimised table).")
    add("")
    add("| system | build s | docs/s | CPU s | peak RSS MB | on disk MB |")
    add("|---|---:|---:|---:|---:|---:|")
    add(f"| SQLite FTS5: insert | {sb['insert_s']:.1f} | {n_rows / sb['insert_s']:,.0f} | | | "
        f"{sb['size_before_optimize_mb']:,.1f} |")
    add(f"| SQLite FTS5: insert + optimize | {sb['total_s']:.1f} | {n_rows / sb['total_s']:,.0f} | "
        f"{sb['cpu_s']:.1f} | {sb['peak_rss_mb']:,.0f} | {sb['disk_mb']:,.1f} |")
    core = build.get("core")
    if core:
        o = core["build"]["ours"]
        idx_mb = o.get("disk_index_mb")
        add(f"| datafusion-fts (from the engine-core run of {core['date']}): load + index | {o['total_s']:.1f} | "
            f"{n_rows / o['total_s']:,.0f} | {o['cpu_s']:.1f} | {o['peak_rss_mb']:,.0f} | "
            f"{o['disk_mb']:,.1f}{f' (index {idx_mb:,.1f})' if idx_mb is not None else ''} |")
    add("")
    add("SQLite's file holds the FTS5 index with positions plus its own copy of `body` (FTS5 stores "
        "the indexed text unless `content=''`); ours holds all Parquet columns plus the index (no positions).")
    add("")
    add("Searches: `SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT k`, "
        "`fetchall()` timed; same terms, timed in its own blocks within the passes above. Each "
        "term is written as an FTS5 string (`\"a\"`), so no word can be read as syntax.")
    add("")
    add("| class | FTS5 query | k | ours SQL p50 | p95 | ours t.search p50 | SQLite p50 | p95 | "
        "**ratio ours(SQL)/SQLite** | ratio t.search/SQLite |")
    add("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cls in CLASSES:
        label_c, _, fform = CLASS_DOC[cls]
        for k in KS:
            row = s["latency"][f"{cls}@{k}"]
            o, a, q = row["sql"], row["search"], row["sqlite"]
            add(f"| {label_c} | {fform} | {k} | {_f(o['p50'])} | {_f(o['p95'])} | {_f(a['p50'])} | "
                f"{_f(q['p50'])} | {_f(q['p95'])} | **{o['p50'] / q['p50']:.2f}x** | {a['p50'] / q['p50']:.2f}x |")
    fl = s["floor"]
    add(f"| term absent | `\"{ABSENT[:4]}…\"` | 10 | {_f(fl['sql'])} | | {_f(fl['search'])} | {_f(fl['sqlite'])} | | "
        f"**{fl['sql'] / fl['sqlite']:.2f}x** | {fl['search'] / fl['sqlite']:.2f}x |")
    add("")
    add("Ratio < 1 means datafusion-fts is faster. SQLite's `ORDER BY bm25(docs) LIMIT k` scores every "
        "matching row (no dynamic pruning) and keeps the k best in its sorter.")
    add("")
    f1 = s["first"]
    add(f"First call after open: ours SQL {f1['sql'] * 1e3:.0f} ms (loads the index segments, cold sqlglot and "
        f"DataFusion paths), then t.search {f1['search'] * 1e3:.1f} ms; SQLite {f1['sqlite'] * 1e3:.1f} ms.")
    add("")

    # -- sanity
    add("### Sanity checks")
    add("")
    mm = s["mismatches"]
    add(f"- SQL vs `t.search`: {s['checked'] - len(mm)}/{s['checked']} query×k pairs return the same row ids "
        "and scores (`_rowid, score()`) and the same `id`, `title` (columns variant), in the same order."
        + (f" Mismatches: {', '.join(mm[:5])}{' …' if len(mm) > 5 else ''}." if mm else ""))
    total = sum(len(v) for v in s["counts"].values())
    agree = sum(1 for v in s["counts"].values() for a, b in v if a == b)
    add(f"- Match counts (ours `limit=None` rows vs SQLite `count(*) ... MATCH`): {agree}/{total} queries agree "
        f"({COUNT_CHECKS_PER_CLASS} per class).")
    ag = s["agreement"]
    per = defaultdict(list)
    per_tb = defaultdict(list)
    for a in ag:
        per[a["class"]].append(a["overlap"])
        per_tb[a["class"]].append(a["overlap_tiebreak"])
    mean = sum(a["overlap"] for a in ag) / len(ag)
    mean_tb = sum(a["overlap_tiebreak"] for a in ag) / len(ag)
    add(f"- Top-10 overlap with SQLite on {len(ag)} queries (round-robin over classes): mean overlap@10 = "
        f"**{mean:.2f}** (per class: " + ", ".join(f"{c} {sum(v) / len(v):.2f}" for c, v in per.items())
        + f"); with SQLite's ORDER BY given ours' tie-break (`ORDER BY bm25(docs), rowid`): **{mean_tb:.2f}** "
        "(" + ", ".join(f"{c} {sum(v) / len(v):.2f}" for c, v in per_tb.items()) + "). "
        "Overlap = |ours ∩ SQLite| / max(|ours|, |SQLite|) over row ids.")
    rels = [a["top1_rel_diff"] for a in ag if a["top1_rel_diff"] is not None]
    if rels:
        by_cls = defaultdict(list)
        for a in ag:
            if a["top1_rel_diff"] is not None:
                by_cls[a["class"]].append(a["top1_rel_diff"])
        add("- Top-1 score, |ours - (-bm25)| / ours, mean per class: " + ", ".join(
            f"{c} {sum(v) / len(v):.1%}" for c, v in by_cls.items()) + ". Same k1, b and length "
            "normalisation, but the IDF differs: ours is Lucene's `ln(1 + (N - n + 0.5) / (n + 0.5))`, FTS5 "
            "uses `ln((N - n + 0.5) / (n + 0.5))` and replaces a value ≤ 0 (a term in more than half the rows) "
            "by 1e-6. A one-term ranking is the same under either IDF (up to ties), but in a disjunction FTS5 "
            "all but ignores a very frequent term, so OR rankings can differ.")
    add("")
    return "\n".join(lines)


# -- main ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=bc._parse_rows, default=1_000_000, help="corpus rows (default 1,000,000)")
    parser.add_argument("--queries", type=int, default=50, help="distinct queries per class (<= 100)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes after the warm-up pass")
    parser.add_argument("--skip-build", action="store_true",
                        help="reuse bench-data/sqlite-<n>.db and its build numbers (built when missing)")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    parser.add_argument("--child", choices=("sqlite",), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", default="synthetic", help=argparse.SUPPRESS)  # (bench_peers' build child)
    args = parser.parse_args(argv)
    n_rows = args.rows

    if args.child:
        common.emit_result(_child_sqlite(n_rows, args.corpus))
        return
    if not 1 <= args.queries <= 100:
        parser.error("--queries must be in 1..100 (the frequent band has 100 words)")
    import corpus

    fts5 = _fts5_info()
    if not (fts5["fts5_option"] or fts5["fts5_works"]):
        parser.error(f"this Python's SQLite {fts5['version']} has no FTS5")
    env = {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": bc._machine(),
        "load_start": common.loadavg(),
        "versions": {p: bc._version(p) for p in ("datafusion-fts", "datafusion", "pyarrow", "sqlglot", "numpy")},
        "fts5": fts5,
    }
    paths = _paths(n_rows)
    t0 = time.perf_counter()
    if corpus.write_parquet(paths["parquet"], n_rows, SEED):
        _log(f"wrote {paths['parquet']} in {time.perf_counter() - t0:.1f} s")
    env["parquet_mb"] = paths["parquet"].stat().st_size / 1e6
    env["ours_note"] = _ensure_ours(n_rows)

    build_note = ""
    if args.skip_build and paths["sqlite"].exists() and paths["build_json"].exists():
        saved = json.loads(paths["build_json"].read_text())
        build = {"sqlite": saved["sqlite"]}
        build_note = (f"*Build numbers reused from the run of {saved['date']} (load average then: {saved['load']}; "
                      f"other processes' CPU then: {saved['other_cpu']}); this run used `--skip-build`.*")
        env["other_build"] = "n/a (build skipped)"
    else:
        with bc._OtherCpu() as other:
            build = {"sqlite": _run_sqlite_child(n_rows)}
        env["other_build"] = other.describe()
        paths["build_json"].write_text(json.dumps(
            {"date": env["date"], "load": env["load_start"], "other_cpu": env["other_build"],
             "sqlite": build["sqlite"]}, indent=2))
    if paths["core_build_json"].exists():
        build["core"] = json.loads(paths["core_build_json"].read_text())

    env["load_search"] = common.loadavg()
    env["git"] = common.git_state()  # the code imported by the search phase
    _log("search benchmark ...")
    with bc._OtherCpu() as other:
        search = _search_bench(n_rows, args.queries, args.repeats)
    env["other_search"] = other.describe()
    env["load_end"] = common.loadavg()

    section = _report(args, n_rows, env, build, build_note, search)
    print(section)
    if not args.no_docs:
        bc.write_docs_section(SECTION, section)
        _log(f"wrote section {SECTION!r} to {DOCS}")


if __name__ == "__main__":
    main()
