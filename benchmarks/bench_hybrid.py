"""Hybrid residual search and flat scan benchmark (issue 5), in one run.

The shape of Lance's published hybrid FTS benchmark (lance-format/lance#8817/#8818: a
10M-row indexed table plus a 100k-row unindexed append, query shapes ``must_should``,
``should_sum`` and ``boost_negative``, p50 in ABBA order, QPS with concurrent workers),
scaled to this machine: 1,000,000 indexed rows of the seeded Zipf corpus
(``benchmarks/corpus.py``) plus 10,000 rows inserted after ``create_index`` (1 %, the same
proportion), so the tail is unindexed.

Arms, all through ``t.search(tree, limit=k, columns=[])``:

* **hybrid** — ``HybridResidualSearch`` (``fts.force_plan = auto`` on the tail database;
  the plan choice is checked to be ``hybrid``), the tail's in-memory index cached;
* **hybrid, no cache** — the same on a second connection with ``fts.tail_cache_entries = 0``,
  so every query re-reads and re-tokenizes the tail;
* **indexed** — a copy of the tail database after ``optimize()`` (the tail indexed too), plan
  choice checked to be ``indexed``;
* **flat scan** — ``fts.force_plan = flat_scan`` on the tail database (scans all rows; timed
  on only ``--flat-queries`` queries per shape because each takes seconds).

Modes: warm single-threaded (one warm-up pass first; per query the arms run A B C [F] C B A,
the start alternating between queries), warm with ``--concurrency`` queries in flight
(``ThreadPoolExecutor``; throughput and per-query latency), and cold (first query after a
fresh ``fts.connect``). Every query's results (row ids and the repr of every score) are
compared across the arms. Finally the flat scan's peak memory over 1M vs 4M rows (no index)
is measured, each in a fresh subprocess.

Usage::

    python benchmarks/bench_hybrid.py                       # 1,000,000 + 10,000 rows
    python benchmarks/bench_hybrid.py --indexed-rows 100k --tail-rows 1k --skip-rss   # quick
    python benchmarks/bench_hybrid.py --skip-build          # reuse bench-data/hybrid-*/

The markdown report is printed and written to ``docs/benchmarks.md`` under
``## Hybrid residual and flat scan (issue 5)`` (only that section is replaced).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core as bc  # noqa: E402  (shared helpers: machine info, load, percentiles)
import common  # noqa: E402  (child processes, /proc/self/status, git state, load average)

ROOT = HERE.parent
DATA = ROOT / "bench-data"
DOCS = ROOT / "docs" / "benchmarks.md"
SECTION = "## Hybrid residual and flat scan (issue 5)"
SEED = bc.SEED
FIELD = "body"
TABLE = "docs"
KS = (10, 100)
SHAPES = ("must_should", "should_sum", "boost_negative")
ARMS = ("hybrid", "nocache", "indexed")  # the fast arms; "flat" is handled apart
ARM_LABEL = {"hybrid": "hybrid (tail cached)", "nocache": "hybrid, no cache", "indexed": "fully indexed",
             "flat": "flat scan"}


def _log(msg: str) -> None:
    print(f"[bench_hybrid {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _paths(indexed: int, tail: int) -> dict[str, Path]:
    total = indexed + tail
    return {
        "parquet": DATA / f"corpus-{total}.parquet",
        "tail_db": DATA / f"hybrid-{indexed}+{tail}",
        "full_db": DATA / f"hybrid-{indexed}+{tail}-optimized",
        "build_json": DATA / f"bench-hybrid-build-{indexed}+{tail}.json",
    }


def _noindex_paths(n_rows: int) -> dict[str, Path]:
    return {"parquet": DATA / f"corpus-{n_rows}.parquet", "db": DATA / f"flat-noindex-{n_rows}"}


def _rows_reader(path: Path, lo: int, hi: int):
    """Rows [lo, hi) of a corpus Parquet file as a RecordBatchReader (streamed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)

    def batches():
        start = 0
        for batch in pf.iter_batches(batch_size=65_536):
            stop = start + batch.num_rows
            a, b = max(lo, start), min(hi, stop)
            if a < b:
                yield batch.slice(a - start, b - a)
            start = stop
            if start >= hi:
                break

    return pa.RecordBatchReader.from_batches(pf.schema_arrow, batches())


def _warm_kernels() -> float:
    """Run every path once (index build, indexed/hybrid search, flat scan) on a tiny table."""
    import pyarrow as pa

    import datafusion_fts as fts
    from datafusion_fts.query import Boolean, Boost, Match

    t0 = time.perf_counter()
    db = fts.connect()
    t = db.create_table("w", pa.table({FIELD: ["alpha beta", "beta gamma", "gamma delta"]}))
    t.create_index(FIELD)
    t.insert(pa.table({FIELD: ["alpha gamma"]}))
    trees = [Boolean(must=(Match(FIELD, "alpha"),), should=(Match(FIELD, "beta"),)),
             Match(FIELD, "alpha beta gamma"),
             Boost(positive=Match(FIELD, "gamma"), negative=Match(FIELD, "alpha"), negative_boost=0.5)]
    for plan in ("auto", "flat_scan"):
        db.settings.set("fts.force_plan", plan)
        for tree in trees:
            t.search(tree, limit=2, columns=[])
    return time.perf_counter() - t0


# -- children (fresh subprocesses) ---------------------------------------------------------
def _child_build(indexed: int, tail: int) -> dict:
    """The tail database (index over the first ``indexed`` rows, then ``tail`` rows inserted)
    and its optimized copy."""
    import datafusion_fts as fts

    warmup_s = _warm_kernels()
    p = _paths(indexed, tail)
    for key in ("tail_db", "full_db"):
        shutil.rmtree(p[key], ignore_errors=True)
    cpu0 = bc._cpu_s()
    t0 = time.perf_counter()
    db = fts.connect(p["tail_db"])
    # Inserted rows are indexed as they arrive (fresh tier), so the tail is made the way
    # a committed unindexed tail arises: rows that no segment holds.
    t = db.create_table(TABLE, _rows_reader(p["parquet"], 0, indexed + tail))
    t1 = time.perf_counter()
    t.build_segment(FIELD, (0, indexed - 1))
    t2 = time.perf_counter()
    assert t.count_rows() == indexed + tail, t.count_rows()
    snap = t.snapshot()
    tail_segments = len(snap.meta.indexes[FIELD].segments)
    covered = snap.meta.indexes[FIELD].covered_until
    tail_fragments = len(snap.meta.fragments)
    del t, db, snap
    gc.collect()
    t4 = time.perf_counter()
    shutil.copytree(p["tail_db"], p["full_db"])
    t5 = time.perf_counter()
    db2 = fts.connect(p["full_db"])
    t_full = db2.table(TABLE)
    t_full.optimize()
    t6 = time.perf_counter()
    snap2 = t_full.snapshot()
    return {
        "warmup_s": warmup_s,
        "load_s": t1 - t0,
        "index_s": t2 - t1,
        "copy_s": t5 - t4,
        "optimize_s": t6 - t5,
        "cpu_s": bc._cpu_s() - cpu0,
        "peak_rss_mb": bc._peak_rss_mb(),
        "tail_segments": tail_segments,
        "tail_covered_until": covered,
        "full_segments": len(snap2.meta.indexes[FIELD].segments),
        "full_covered_until": snap2.meta.indexes[FIELD].covered_until,
        "tail_fragments": tail_fragments,
        "full_fragments": len(snap2.meta.fragments),
        "tail_disk_mb": bc._dir_mb(p["tail_db"]),
        "full_disk_mb": bc._dir_mb(p["full_db"]),
    }


def _child_build_noindex(n_rows: int) -> dict:
    import corpus

    import datafusion_fts as fts

    p = _noindex_paths(n_rows)
    t0 = time.perf_counter()
    generated = corpus.write_parquet(p["parquet"], n_rows, SEED)
    t1 = time.perf_counter()
    shutil.rmtree(p["db"], ignore_errors=True)
    t = fts.connect(p["db"]).create_table(TABLE, str(p["parquet"]))
    t2 = time.perf_counter()
    assert t.count_rows() == n_rows
    return {"generate_s": t1 - t0 if generated else None, "load_s": t2 - t1,
            "fragments": len(t.snapshot().meta.fragments), "disk_mb": bc._dir_mb(p["db"])}


def _child_rss(n_rows: int, shape: str, k: int) -> dict:
    """One forced flat-scan query over the no-index table; VmHWM before and after."""
    import datafusion_fts as fts

    _warm_kernels()
    db = fts.connect(_noindex_paths(n_rows)["db"])
    db.settings.set("fts.force_plan", "flat_scan")
    t = db.table(TABLE)
    assert not t.snapshot().meta.indexes, "the RSS table must have no index"
    tree = _queries(30)[shape][0][1]  # the benchmark's first query of the shape
    gc.collect()
    before = common.proc_status_kb()
    # VmHWM is the kernel's own peak of VmRSS = RssAnon + RssFile (+ RssShmem); the split is
    # not kept as a peak, so a thread samples it every 10 ms during the query.
    peak = dict(before)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            for key, value in common.proc_status_kb().items():
                peak[key] = max(peak[key], value)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    plan, req = t.plan(tree, limit=k)
    batches = list(plan.execute())
    elapsed = time.perf_counter() - t0
    done.set()
    sampler.join()
    after = common.proc_status_kb()
    for key, value in after.items():
        peak[key] = max(peak[key], value)
    scanned = sum(op.metrics.values.get("rows_scanned", 0) for op in plan.children())
    mb = {key: value / 1024 for key, value in before.items()}
    return {"rows": n_rows, "shape": shape, "k": k, "choice": req.choice,
            "hwm_before_mb": mb["VmHWM"], "hwm_after_mb": after["VmHWM"] / 1024,
            "increase_mb": (after["VmHWM"] - before["VmHWM"]) / 1024,
            "anon_before_mb": mb["RssAnon"], "anon_peak_mb": peak["RssAnon"] / 1024,
            "anon_increase_mb": (peak["RssAnon"] - before["RssAnon"]) / 1024,
            "file_before_mb": mb["RssFile"], "file_peak_mb": peak["RssFile"] / 1024,
            "file_increase_mb": (peak["RssFile"] - before["RssFile"]) / 1024,
            "rss_after_mb": after["VmRSS"] / 1024, "elapsed_s": elapsed, "rows_scanned": scanned,
            "hits": sum(b.num_rows for b in batches)}


def _run_child(argv: list[str]) -> dict:
    return common.run_child(__file__, argv, _log)


# -- queries -------------------------------------------------------------------------------
def _queries(n: int) -> dict[str, list[tuple[tuple[str, ...], object]]]:
    """``n`` distinct (terms, tree) per shape; terms from ``corpus.query_terms``."""
    import corpus
    from datafusion_fts.query import Boolean, Boost, Match

    def draw(band: str, count: int, rng_seed: int) -> list[str]:
        return corpus.query_terms(SEED, band, count, rng_seed)

    ms_m, ms_f = draw("medium", n, 51), draw("frequent", n, 52)
    ss_f, ss_m = draw("frequent", n, 53), draw("medium", 2 * n, 54)
    bn_m, bn_f = draw("medium", n, 55), draw("frequent", n, 56)
    out: dict[str, list] = {s: [] for s in SHAPES}
    for i in range(n):
        out["must_should"].append(((ms_m[i], ms_f[i]), Boolean(
            must=(Match(FIELD, ms_m[i]),), should=(Match(FIELD, ms_f[i]),))))
        terms = (ss_f[i], ss_m[i], ss_m[n + i])
        out["should_sum"].append((terms, Match(FIELD, " ".join(terms), operator="or")))
        out["boost_negative"].append(((bn_m[i], bn_f[i]), Boost(
            positive=Match(FIELD, bn_m[i]), negative=Match(FIELD, bn_f[i]), negative_boost=0.5)))
    return out


SHAPE_DOC = {
    "must_should": "`Boolean(must=[Match(body, m)], should=[Match(body, f)])`",
    "should_sum": "`Match(body, \"f m1 m2\")` (OR: score = sum)",
    "boost_negative": "`Boost(positive=Match(body, m), negative=Match(body, f), negative_boost=0.5)`",
}


def _key(res) -> tuple:
    return (tuple(res.column("_rowid").to_pylist()), tuple(repr(s) for s in res.column("_score").to_pylist()))


def _find(plan, cls_name: str):
    if type(plan).__name__ == cls_name:
        return plan
    for child in plan.children():
        found = _find(child, cls_name)
        if found is not None:
            return found
    return None


def _stats(xs: list[float]) -> dict:
    return {"p50": bc._pct(xs, 50), "p95": bc._pct(xs, 95), "mean": sum(xs) / len(xs), "n": len(xs)}


# -- search --------------------------------------------------------------------------------
def _cold(paths: dict, queries: dict, reps: int) -> dict:
    """First queries after a fresh ``fts.connect`` (OS page cache warm, kernels loaded)."""
    import datafusion_fts as fts

    qs = queries["must_should"]
    out: dict[str, list] = {"hybrid": [], "nocache": [], "indexed": [], "hybrid_pre": [], "indexed_pre": []}

    def one(kind: str, i: int) -> dict:
        gc.collect()
        path = paths["full_db"] if kind.startswith("indexed") else paths["tail_db"]
        t0 = time.perf_counter()
        db = fts.connect(path)
        if kind == "nocache":
            db.settings.set("fts.tail_cache_entries", 0)
        t = db.table(TABLE)
        open_ms = (time.perf_counter() - t0) * 1e3
        rec = {"open_ms": open_ms}
        if kind.endswith("_pre"):  # load the persisted segments first: isolates the tail's cost
            t0 = time.perf_counter()
            for meta in t.snapshot().meta.indexes[FIELD].segments:
                db.segment(meta)
            rec["segments_ms"] = (time.perf_counter() - t0) * 1e3
        tree, tree2 = qs[i % len(qs)][1], qs[(i + 1) % len(qs)][1]
        t0 = time.perf_counter()
        t.search(tree, limit=10, columns=[])
        rec["first_ms"] = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        t.search(tree2, limit=10, columns=[])
        rec["second_ms"] = (time.perf_counter() - t0) * 1e3
        plan, req = t.plan(tree, limit=10)
        rec["choice"] = req.choice
        hyb = _find(plan, "HybridResidualSearch")
        if hyb is not None:  # with the cache on, the entry of the first query's build
            info = hyb.tails[FIELD]
            rec["tail_rows"] = info.rows
            rec["tail_build_ms"] = info.build_ms
            rec["tail_cached"] = info.cached
        del t, db
        gc.collect()
        return rec

    kinds = ["hybrid", "nocache", "indexed", "hybrid_pre", "indexed_pre"]
    for r in range(reps):
        order = kinds if r % 2 == 0 else kinds[::-1]
        for kind in order:
            out[kind].append(one(kind, 2 * r))
    return out


def _search_bench(paths: dict, n_queries: int, flat_queries: int, concurrency: int, cold_reps: int,
                  total_rows: int) -> dict:
    import datafusion_fts as fts

    queries = _queries(n_queries)
    res: dict = {"warm_kernels_s": _warm_kernels()}

    _log("cold first queries ...")
    res["cold"] = _cold(paths, queries, cold_reps)

    db_h = fts.connect(paths["tail_db"])
    db_n = fts.connect(paths["tail_db"])
    db_n.settings.set("fts.tail_cache_entries", 0)
    def flat_connection():
        db = fts.connect(paths["tail_db"])
        db.settings.set("fts.force_plan", "flat_scan")
        return db.table(TABLE)

    db_f = fts.connect(paths["tail_db"])
    db_f.settings.set("fts.force_plan", "flat_scan")
    db_i = fts.connect(paths["full_db"])
    tables = {"hybrid": db_h.table(TABLE), "nocache": db_n.table(TABLE), "indexed": db_i.table(TABLE),
              "flat": db_f.table(TABLE)}
    for name, t in tables.items():
        assert t.count_rows() == total_rows, (name, t.count_rows())
    want_choice = {"hybrid": "hybrid", "nocache": "hybrid", "indexed": "indexed", "flat": "flat_scan"}

    # Warm-up pass, which also collects every fast arm's results and checks the plan choices.
    _log("warm-up pass (checks plan choices, collects results) ...")
    results: dict = {}
    choices_ok = 0
    choices_bad: list = []
    n_results: dict = {}
    for shape, qs in queries.items():
        for k in KS:
            for i, (terms, tree) in enumerate(qs):
                for arm in ARMS:
                    t = tables[arm]
                    choice = t.plan(tree, limit=k)[1].choice
                    if choice == want_choice[arm]:
                        choices_ok += 1
                    else:
                        choices_bad.append((arm, shape, k, i, choice))
                    r = t.search(tree, limit=k, columns=[])
                    results[(shape, k, i, arm)] = _key(r)
                    if arm == "indexed":
                        n_results.setdefault((shape, k), []).append(r.num_rows)
    # Hybrid tail build time (the entry cached by the warm-up) and flat plan choice.
    plan = tables["hybrid"].plan(queries["must_should"][0][1], limit=10)[0]
    info = _find(plan, "HybridResidualSearch").tails[FIELD]
    res["tail_info"] = {"first_row": info.ranges[0][0] if info.ranges else 0, "rows": info.rows,
                        "build_ms": info.build_ms, "cached": info.cached}
    for shape, qs in queries.items():
        choice = tables["flat"].plan(qs[0][1], limit=10)[1].choice
        if choice != "flat_scan":
            choices_bad.append(("flat", shape, 10, 0, choice))
    _log("flat scan warm-up (one query) ...")
    t0 = time.perf_counter()
    tables["flat"].search(queries["must_should"][0][1], limit=10, columns=[])
    res["flat_warmup_s"] = time.perf_counter() - t0

    # Warm single-threaded: per query A B C [F] C B A, alternating the start.
    _log("warm single-threaded timed pass ...")
    samples: dict = {}
    perf = time.perf_counter_ns
    gc.collect()
    for shape, qs in queries.items():
        for k in KS:
            _log(f"  {shape} k={k}")
            for i, (terms, tree) in enumerate(qs):
                arms = list(ARMS) if i % 2 == 0 else list(ARMS)[::-1]
                seq = arms + (["flat"] if i < flat_queries else []) + arms[::-1]
                for arm in seq:
                    t = tables[arm]
                    a = perf()
                    r = t.search(tree, limit=k, columns=[])
                    b = perf()
                    samples.setdefault((shape, k, arm), []).append((b - a) / 1e6)
                    if i < flat_queries:
                        samples.setdefault((shape, k, arm, "subset"), []).append((b - a) / 1e6)
                    if arm == "flat":
                        results[(shape, k, i, "flat")] = _key(r)
    single = {}
    for shape in SHAPES:
        for k in KS:
            row = {arm: _stats(samples[(shape, k, arm)]) for arm in ARMS}
            if flat_queries:
                row["flat"] = _stats(samples[(shape, k, "flat")])
                for arm in ARMS:
                    row[arm + "_subset"] = _stats(samples[(shape, k, arm, "subset")])
            single[f"{shape}@{k}"] = row
    res["single"] = single

    # Exactness: every arm against the fully indexed plan.
    mismatches: dict = {}
    checked: dict = {}
    examples = []
    for (shape, k, i, arm), key in results.items():
        if arm == "indexed":
            continue
        checked[arm] = checked.get(arm, 0) + 1
        if key != results[(shape, k, i, "indexed")]:
            mismatches[arm] = mismatches.get(arm, 0) + 1
            if len(examples) < 5:
                examples.append({"arm": arm, "shape": shape, "k": k, "i": i,
                                 "got": [list(key[0][:5]), list(key[1][:5])],
                                 "indexed": [list(results[(shape, k, i, 'indexed')][0][:5]),
                                             list(results[(shape, k, i, 'indexed')][1][:5])]})
    res["exact"] = {"checked": checked, "mismatches": mismatches, "examples": examples,
                    "choices_ok": choices_ok, "choices_bad": choices_bad[:10],
                    "n_choices_bad": len(choices_bad),
                    "n_results": {f"{s}@{k}": [min(v), max(v)] for (s, k), v in n_results.items()}}

    # Warm concurrent: all queries of a shape/k in flight on a pool; two rounds in ABBA order.
    _log(f"warm concurrent pass ({concurrency} in flight) ...")
    pool = ThreadPoolExecutor(concurrency)
    list(pool.map(lambda x: x, range(concurrency * 2)))  # start the threads

    def timed(t, tree, k):
        a = perf()
        t.search(tree, limit=k, columns=[])
        return (perf() - a) / 1e6

    conc: dict = {}
    gc.collect()
    for shape, qs in queries.items():
        for k in KS:
            lat: dict = {arm: [] for arm in ARMS}
            wall: dict = {arm: 0.0 for arm in ARMS}
            for rnd in range(2):
                for arm in (list(ARMS) if rnd == 0 else list(ARMS)[::-1]):
                    t = tables[arm]
                    a = time.perf_counter()
                    lat[arm].extend(pool.map(lambda q: timed(t, q[1], k), qs))
                    wall[arm] += time.perf_counter() - a
            row = {arm: {**_stats(lat[arm]), "qps": len(lat[arm]) / wall[arm]} for arm in ARMS}
            if flat_queries and k == KS[0]:
                # Each in-flight flat scan gets its own connection: one connection's
                # DirectoryStore hands the same cached pq.ParquetFile to every thread, and
                # concurrent iter_batches on one ParquetFile crashes or hangs pyarrow.
                _log(f"  flat concurrent {shape} ...")
                flat_tables = [flat_connection() for _ in range(flat_queries)]
                a = time.perf_counter()
                fl = list(pool.map(lambda j: timed(flat_tables[j], qs[j][1], k), range(flat_queries)))
                row["flat"] = {**_stats(fl), "qps": len(fl) / (time.perf_counter() - a)}
                del flat_tables
            conc[f"{shape}@{k}"] = row
    pool.shutdown()
    res["concurrent"] = conc

    # Where the time goes: plan (incl. the tail build without cache) vs execute.
    _log("cost breakdown ...")
    brk: dict = {}
    for shape, qs in queries.items():
        for arm in ARMS:
            t = tables[arm]
            plan_ms, exec_ms, tail_ms = [], [], []
            for _terms, tree in qs[:10]:
                a = perf()
                plan, _req = t.plan(tree, limit=10)
                b = perf()
                list(plan.execute())
                c = perf()
                plan_ms.append((b - a) / 1e6)
                exec_ms.append((c - b) / 1e6)
                hyb = _find(plan, "HybridResidualSearch")
                if hyb is not None and not hyb.tails[FIELD].cached:
                    tail_ms.append(hyb.tails[FIELD].build_ms)
            brk[f"{shape}|{arm}"] = {"plan": bc._pct(plan_ms, 50), "exec": bc._pct(exec_ms, 50),
                                     "tail_build": bc._pct(tail_ms, 50) if tail_ms else None}
    res["breakdown"] = brk

    # The floor under any plan that reads the tail per query: reading its text, no more.
    snap = tables["nocache"].snapshot()
    read_ms = []
    for _ in range(10):
        a = perf()
        for lo, hi in snap.uncovered(FIELD):
            for _batch in snap.scan([FIELD], row_range=(lo, hi)):
                pass
        read_ms.append((perf() - a) / 1e6)
    res["tail_read_ms"] = bc._pct(read_ms, 50)

    # A profile of the no-cache hybrid query (what re-building the tail per query costs).
    import cProfile
    import pstats

    t = tables["nocache"]
    prof = cProfile.Profile()
    n_prof = 0
    prof.enable()
    for qs in queries.values():
        for _terms, tree in qs[:5]:
            t.search(tree, limit=10, columns=[])
            n_prof += 1
    prof.disable()
    rows = []
    for (file, line, func), (_cc, _nc, tt, ct, _callers) in pstats.Stats(prof).stats.items():
        if "datafusion_fts" in file or func in ("iter_batches", "read_row_group", "to_batches"):
            short = file.split("datafusion_fts/")[-1] if "datafusion_fts" in file else Path(file).name
            rows.append({"func": f"{short}:{func}", "cum_ms": ct * 1e3 / n_prof, "self_ms": tt * 1e3 / n_prof})
    rows.sort(key=lambda r: -r["cum_ms"])
    res["profile_nocache"] = {"queries": n_prof, "top": rows[:16]}
    res["segments_in_memory"] = {arm: len(tables[arm].snapshot().meta.indexes[FIELD].segments)
                                 for arm in ("hybrid", "indexed")}
    return res


# -- report --------------------------------------------------------------------------------
F = bc._fmt_ms


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _report(args, env: dict, build: dict, build_note: str, s: dict, rss: dict | None) -> str:
    import corpus

    n_i, n_t = args.indexed_rows, args.tail_rows
    total = n_i + n_t
    lines: list[str] = [SECTION, ""]
    add = lines.append
    flags = [f"--indexed-rows {n_i}", f"--tail-rows {n_t}", f"--queries {args.queries}"]
    if args.flat_queries != 3:
        flags.append(f"--flat-queries {args.flat_queries}")
    for name in ("skip_build", "skip_rss"):
        if getattr(args, name):
            flags.append("--" + name.replace("_", "-"))
    add(f"Generated by `python benchmarks/bench_hybrid.py {' '.join(flags)}` on {env['date']}.")
    add("")
    add("The shape of Lance's published hybrid FTS benchmark (lance-format/lance PRs #8817/#8818: "
        "10M indexed rows + a 100k-row unindexed append, shapes `must_should` / `should_sum` / "
        "`boost_negative`, p50 in ABBA order, QPS with 8 workers) scaled to this 2-core machine: "
        f"{n_i:,} indexed rows + {n_t:,} unindexed rows ({n_t / n_i:.1%}), {args.concurrency} queries in flight.")
    add("")
    add("### Setup")
    add("")
    m = env["machine"]
    add(f"- **Machine**: {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}")
    add(f"- **Load average** (1/5/15 min): at start {env['load_start']}, before search {env['load_search']}, "
        f"after search {env['load_after_search']}, at end {env['load_end']}.")
    add(f"- **Other processes' CPU** (machine-wide /proc/stat busy time minus this benchmark's own): "
        f"during the build {env['other_build']}; during the search phase {env['other_search']}; during the "
        f"flat-scan memory runs {env['other_rss']}. Anything well above 0 means the machine was shared and busy "
        "while the numbers were taken (it has 2 cores).")
    add(f"- **Python** {m['python']}; " + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + f"; code at commit {env['commit']}.")
    add(f"- **Corpus**: `corpus.write_parquet(bench-data/corpus-{total}.parquet, {total:,}, seed={SEED})` "
        f"({env['parquet_mb']:.1f} MB): {corpus.VOCAB_SIZE:,}-word vocabulary, Zipf s={corpus.ZIPF_S}, body "
        f"~{corpus.BODY_MEAN_WORDS:.0f} words; only `body` is indexed (default analyzer, BM25 k1=1.2, b=0.75).")
    tail_mb = build.get("tail_disk_mb")
    add(f"- **Tail database** `bench-data/hybrid-{n_i}+{n_t}/`: `create_table` from rows 0..{total - 1:,}, "
        f"then `build_segment(\"body\", (0, {n_i - 1}))` (rows {n_i:,}..{total - 1:,} are a committed tail no "
        f"segment holds: index covers rows up to {build['tail_covered_until']:,}; {build['tail_segments']} "
        f"segment(s); {build.get('tail_fragments', '?')} fragment(s); {tail_mb:,.0f} MB on disk; inserted rows "
        "would not make a tail: they are indexed as they arrive). "
        f"**Fully indexed database**: a copy of it after `optimize()` ({build['full_segments']} segment(s), "
        f"covers up to {build['full_covered_until']:,}).")
    add(f"- **Build** (fresh subprocess): load {build['load_s']:.1f} s, index {build['index_s']:.1f} s, "
        f"copy {build['copy_s']:.1f} s, optimize {build['optimize_s']:.1f} s; "
        f"peak RSS {build['peak_rss_mb']:,.0f} MB." + (f" {build_note}" if build_note else ""))
    ti = s["tail_info"]
    add(f"- Settings: `fts.residual_row_limit` = 100,000 (default), `fts.tail_cache_entries` = 16 (default) for "
        f"*hybrid*, 0 for *hybrid, no cache*. The warm tail index covers {ti['rows']:,} rows "
        f"(rows {ti['first_row']:,}..{ti['first_row'] + ti['rows'] - 1:,}).")
    add("")
    add("### Query shapes")
    add("")
    add(f"{args.queries} distinct queries per shape, each at k=10 and k=100; terms from `corpus.query_terms` "
        "(f = frequent band, Zipf ranks 0-99; m = medium band, ranks 1,000-9,999). Result rows per query "
        "(min-max) from the fully indexed plan:")
    add("")
    add("| shape | tree | rows returned k=10 | k=100 |")
    add("|---|---|---:|---:|")
    nr = s["exact"]["n_results"]
    for shape in SHAPES:
        a, b = nr[f"{shape}@10"], nr[f"{shape}@100"]
        add(f"| `{shape}` | {SHAPE_DOC[shape]} | {a[0]}-{a[1]} | {b[0]}-{b[1]} |")
    add("")
    add("Every arm runs `t.search(tree, limit=k, columns=[])` (only `_rowid`, `_score`): *hybrid* = "
        "`HybridResidualSearch` chosen by the planner (`fts.force_plan = auto`, choice checked), *hybrid, no "
        "cache* = the same with the tail re-read and re-tokenized by every query, *fully indexed* = "
        "`IndexedSearch` on the optimized copy, *flat scan* = `fts.force_plan = flat_scan` on the tail "
        f"database (all {total:,} rows scanned per query).")
    add("")

    add("### Warm, single-threaded")
    add("")
    fq = args.flat_queries
    add(f"One warm-up pass over all queries, then one timed pass: per query the arms run A B C"
        f"{' F' if fq else ''} C B A (the start alternates between queries), so each fast arm has "
        f"{2 * args.queries} timings per shape and k. **Flat scan is timed on only the first {fq} queries per "
        f"shape** (one timing each; it scans {total:,} rows); the *flat / hybrid* ratios compare medians over "
        "those same queries. Milliseconds.")
    add("")
    add("| shape | k | hybrid p50 | p95 | no-cache p50 | p95 | indexed p50 | p95 | flat p50 | "
        "**hybrid / indexed** | **no-cache / indexed** | **flat / hybrid** | **flat / no-cache** |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios = {"hyb_idx": [], "nc_idx": [], "flat_hyb": [], "flat_nc": []}
    for shape in SHAPES:
        for k in KS:
            row = s["single"][f"{shape}@{k}"]
            h, n, i = row["hybrid"], row["nocache"], row["indexed"]
            r1, r2 = h["p50"] / i["p50"], n["p50"] / i["p50"]
            ratios["hyb_idx"].append((r1, shape, k))
            ratios["nc_idx"].append((r2, shape, k))
            flat_cells = "—", "—", "—"
            if "flat" in row:
                fl = row["flat"]["p50"]
                r3 = fl / row["hybrid_subset"]["p50"]
                r4 = fl / row["nocache_subset"]["p50"]
                ratios["flat_hyb"].append((r3, shape, k))
                ratios["flat_nc"].append((r4, shape, k))
                flat_cells = f"{fl:,.0f}", f"{r3:,.0f}x", f"{r4:,.0f}x"
            add(f"| `{shape}` | {k} | {F(h['p50'])} | {F(h['p95'])} | {F(n['p50'])} | {F(n['p95'])} | "
                f"{F(i['p50'])} | {F(i['p95'])} | {flat_cells[0]} | **{r1:.2f}x** | **{r2:.2f}x** | "
                f"**{flat_cells[1]}** | **{flat_cells[2]}** |")
    add("")

    add(f"### Warm, {args.concurrency} concurrent queries")
    add("")
    add(f"`ThreadPoolExecutor({args.concurrency})` runs all {args.queries} queries of a shape and k (`pool.map`); "
        "two rounds per arm in ABBA order. QPS = queries / wall time; latency = each query's own time while "
        f"sharing the {m['cores']} cores. Flat scan: its {fq} queries per shape at k=10 only, in flight together, "
        "each on its own connection (on one shared connection, concurrent flat scans call `iter_batches` on the "
        "same cached `pq.ParquetFile` — `DirectoryStore._parquet` — which crashed or hung this benchmark: "
        "pyarrow readers are not safe to share between threads).")
    add("")
    add("| shape | k | hybrid QPS | p50 | p95 | no-cache QPS | p50 | p95 | indexed QPS | p50 | p95 | flat QPS | "
        "**QPS indexed / hybrid** | **QPS indexed / no-cache** | **QPS hybrid / flat** |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape in SHAPES:
        for k in KS:
            row = s["concurrent"][f"{shape}@{k}"]
            h, n, i = row["hybrid"], row["nocache"], row["indexed"]
            flat = row.get("flat")
            fcell = f"{flat['qps']:.2f}" if flat else "—"
            fr = f"**{h['qps'] / flat['qps']:,.0f}x**" if flat else "—"
            add(f"| `{shape}` | {k} | {h['qps']:,.0f} | {F(h['p50'])} | {F(h['p95'])} | {n['qps']:,.0f} | "
                f"{F(n['p50'])} | {F(n['p95'])} | {i['qps']:,.0f} | {F(i['p50'])} | {F(i['p95'])} | {fcell} | "
                f"**{i['qps'] / h['qps']:.2f}x** | **{i['qps'] / n['qps']:.2f}x** | {fr} |")
    add("")

    add("### Cold: first queries after a fresh `fts.connect`")
    add("")
    c = s["cold"]
    reps = len(c["hybrid"])
    add(f"{reps} repetitions (ABBA order over the variants), `must_should` queries, k=10, in this process "
        "(every path run once before, OS page cache warm). *first* = the first `t.search` after connect "
        "(loads the persisted segments, and for hybrid builds the tail's in-memory index); *second* = "
        "a different query right after. The *segments preloaded* rows call `db.segment(...)` for every "
        "segment first (timed apart), so their first query pays only the tail (hybrid) or nothing extra "
        "(indexed). *tail build recorded* = `TailInfo.build_ms` of the plan's tail (with the cache on: the first "
        "query's build, which also loaded the segments unless preloaded; no cache: the last query's). "
        "Milliseconds, median over the repetitions.")
    add("")
    add("| variant | connect | segments preloaded | first query | second query | tail build recorded |")
    add("|---|---:|---:|---:|---:|---:|")

    def med(rows, key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return bc._pct(vals, 50) if vals else None

    for kind, label in (("hybrid", "hybrid (cache on)"), ("nocache", "hybrid, no cache"),
                        ("indexed", "fully indexed"), ("hybrid_pre", "hybrid, segments preloaded"),
                        ("indexed_pre", "fully indexed, segments preloaded")):
        rows = c[kind]
        seg, tb = med(rows, "segments_ms"), med(rows, "tail_build_ms")
        add(f"| {label} | {F(med(rows, 'open_ms'))} | {F(seg) if seg is not None else '—'} | "
            f"**{F(med(rows, 'first_ms'))}** | {F(med(rows, 'second_ms'))} | {F(tb) if tb is not None else '—'} |")
    add("")
    tail_first = med(c["hybrid_pre"], "first_ms") - med(c["indexed_pre"], "first_ms")
    add(f"Cost of tokenizing and indexing the {ti['rows']:,}-row tail on the first hybrid query ≈ first query "
        f"with segments preloaded, hybrid minus indexed: **{tail_first:,.0f} ms**. The warm cache entry "
        f"recorded a tail build of {ti['build_ms']:,.0f} ms (measured inside `hybrid_segment_set`, which also "
        "includes assembling the segment set).")
    add("")

    add(f"### Where the time goes (k=10, median over {min(10, args.queries)} queries per shape)")
    add("")
    add("`t.plan(...)` (bind; for hybrid fetch or build the tail index and the segment set) vs "
        "`plan.execute()` (postings, scoring, top-k). Milliseconds.")
    add("")
    add("| shape | hybrid plan | exec | no-cache plan | of which tail build | exec | indexed plan | exec |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|")
    b = s["breakdown"]
    for shape in SHAPES:
        h, n, i = b[f"{shape}|hybrid"], b[f"{shape}|nocache"], b[f"{shape}|indexed"]
        tb = F(n["tail_build"]) if n["tail_build"] is not None else "—"
        add(f"| `{shape}` | {F(h['plan'])} | {F(h['exec'])} | {F(n['plan'])} | {tb} | {F(n['exec'])} | "
            f"{F(i['plan'])} | {F(i['exec'])} |")
    add("")

    pn = s["profile_nocache"]
    add(f"cProfile of {pn['queries']} no-cache hybrid queries (k=10, {pn['queries'] // 3} per shape), functions of "
        "`datafusion_fts` by cumulative time, ms per query (profiling overhead inflates Python-heavy code):")
    add("")
    add("| function | cumulative ms / query | self ms / query |")
    add("|---|---:|---:|")
    for r in pn["top"]:
        add(f"| `{r['func']}` | {F(r['cum_ms'])} | {F(r['self_ms'])} |")
    add("")

    add("### Exactness")
    add("")
    e = s["exact"]
    total_mis = sum(e["mismatches"].values())
    parts = [f"{ARM_LABEL[a]} {e['mismatches'].get(a, 0)} / {n}" for a, n in e["checked"].items()]
    add("Row ids and `repr` of every score compared with the fully indexed plan: mismatches "
        + "; ".join(parts) + f" (queries × k) — **{total_mis} mismatches in total** (expected 0). "
        f"The hybrid and no-cache arms are checked on all {args.queries} queries × 3 shapes × 2 k (warm-up "
        f"pass); flat scan on its {fq} timed queries per shape and k. Plan choices as expected: "
        f"{e['choices_ok']} checks, {e['n_choices_bad']} unexpected.")
    if e["examples"]:
        add("")
        add("First mismatches: " + json.dumps(e["examples"]))
    add("")

    add("### Targets")
    add("")
    fh = min(ratios["flat_hyb"]) if ratios["flat_hyb"] else None
    fn = min(ratios["flat_nc"]) if ratios["flat_nc"] else None
    hi = max(ratios["hyb_idx"])
    ni = max(ratios["nc_idx"])

    def where(t):
        return f"`{t[1]}` k={t[2]}"

    if fh is not None:
        add(f"- Hybrid ≥ 10x faster than flat scan (p50, single-threaded): {_verdict(fn[0] >= 10)} — flat / hybrid "
            f"≥ {fh[0]:,.0f}x with the tail cached (worst {where(fh)}), ≥ {fn[0]:,.0f}x even with no cache "
            f"(worst {where(fn)}).")
    else:
        add("- Hybrid ≥ 10x faster than flat scan: not measured (`--flat-queries 0`).")
    add(f"- Hybrid ≤ 2x the fully indexed plan, p50, no cache (tail re-tokenized per query): "
        f"{_verdict(ni[0] <= 2)} — worst no-cache / indexed = **{ni[0]:.2f}x** ({where(ni)}); "
        "per shape and k: " + ", ".join(f"{r:.2f}x" for r, _, _ in ratios["nc_idx"]) + ".")
    add(f"- Hybrid ≤ 1.2x the fully indexed plan, p50, warm tail cache: {_verdict(hi[0] <= 1.2)} — worst "
        f"hybrid / indexed = **{hi[0]:.2f}x** ({where(hi)}); per shape and k: "
        + ", ".join(f"{r:.2f}x" for r, _, _ in ratios["hyb_idx"]) + ".")
    add(f"- Exact results: {_verdict(total_mis == 0)} — {total_mis} mismatches.")
    add("")
    b = s["breakdown"]
    nc_plan = bc._pct([b[f"{sh}|nocache"]["plan"] for sh in SHAPES], 50)
    nc_exec = bc._pct([b[f"{sh}|nocache"]["exec"] for sh in SHAPES], 50)
    tails = [b[f"{sh}|nocache"]["tail_build"] for sh in SHAPES if b[f"{sh}|nocache"]["tail_build"] is not None]
    idx_total = bc._pct([b[f"{sh}|indexed"]["plan"] + b[f"{sh}|indexed"]["exec"] for sh in SHAPES], 50)
    prof = {r["func"]: r["cum_ms"] for r in s["profile_nocache"]["top"]}

    def pf(suffix: str) -> str:
        hit = [v for f_, v in prof.items() if f_.endswith(suffix)]
        return f"{hit[0]:,.0f} ms" if hit else "n/a"

    if tails:
        tail_ms = bc._pct(tails, 50)
        per_row_us = tail_ms * 1e3 / max(ti["rows"], 1)
        budget_rows = idx_total * 1e3 / per_row_us
        add(f"Where the no-cache hybrid's time goes (k=10, medians over the shapes): planning "
            f"{nc_plan:,.0f} ms, of which rebuilding the {ti['rows']:,}-row tail index {tail_ms:,.0f} ms "
            f"(≈{per_row_us:.1f} µs per row: the tail is read on the query's thread, "
            f"`store.py:iter_fragment` {pf('store.py:iter_fragment')} under the profiler, and tokenized "
            "and inverted in worker threads, which cProfile does not see); "
            f"executing {nc_exec:.2f} ms. "
            f"The whole indexed query takes {idx_total:.2f} ms, so at this per-row cost a tail "
            f"re-indexed per query fits in 2x the indexed plan only below ~{budget_rows:,.0f} rows. "
            f"With the tail index cached (built once per tail version) the hybrid plan's p50 is "
            f"{min(ratios['hyb_idx'])[0]:.2f}x-{hi[0]:.2f}x the indexed plan's.")
        add("")
        read = s["tail_read_ms"]
        add(f"Reading the tail's `{FIELD}` text alone (`snapshot.scan` of its rows, median of 10, nothing "
            f"tokenized) takes **{read:.2f} ms = {read / idx_total:.1f}x the whole indexed query**: no plan "
            "that reads the tail per query can be within 2x of the indexed plan at this tail size; only an "
            "index of the tail kept between queries (the tail cache) can.")
        add("")

    sizes_txt = " vs ".join(f"{n / 1e6:g}M" if n >= 1_000_000 else f"{n / 1e3:g}k" for n in args.rss_sizes)
    add(f"### FlatScanSearch memory: {sizes_txt} rows")
    add("")
    if rss is None:
        add("Skipped (`--skip-rss`).")
        add("")
    else:
        add("A table with no index (`create_table` from `corpus-<n>.parquet`, `bench-data/flat-noindex-<n>/`), "
            "one forced flat-scan query (k=10, the benchmark's first query of the shape) per fresh subprocess. "
            "Before the query the child has imported everything, run every shape on a tiny table "
            "and opened the table. *VmHWM increase* = peak RSS after the query minus before "
            "(/proc/self/status). RSS is anonymous memory (`RssAnon`: what the operator allocates) plus "
            "file-backed pages (`RssFile`); their peaks are sampled every 10 ms during the query. Scan batches "
            "are 32,768 rows; fragments are 1,048,576 rows in 16,384-row row groups. MB.")
        add("")
        add("| rows | shape | seconds | rows scanned (per pass) | VmHWM before | VmHWM after | "
            "**VmHWM increase** | **peak RssAnon increase** | peak RssFile increase |")
        add("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rss["runs"]:
            add(f"| {r['rows']:,} | `{r['shape']}` | {r['elapsed_s']:.1f} | {r['rows_scanned']:,} | "
                f"{r['hwm_before_mb']:,.0f} | {r['hwm_after_mb']:,.0f} | **{r['increase_mb']:,.0f}** | "
                f"**{r['anon_increase_mb']:,.0f}** | {r['file_increase_mb']:,.0f} |")
        add("")
        sizes = sorted({r["rows"] for r in rss["runs"]})
        if len(sizes) > 1:
            small, big = sizes[0], sizes[-1]
            by: dict = {}
            for r in rss["runs"]:
                by.setdefault(r["shape"], {})[r["rows"]] = r
            shapes = [sh for sh in by if small in by[sh] and big in by[sh]]

            def span(key: str) -> str:
                return ", ".join(f"`{sh}` {by[sh][small][key]:,.0f} → {by[sh][big][key]:,.0f}" for sh in shapes)

            anon_growth = max(by[sh][big]["anon_increase_mb"] - by[sh][small]["anon_increase_mb"] for sh in shapes)
            hwm_growth = max(by[sh][big]["increase_mb"] - by[sh][small]["increase_mb"] for sh in shapes)
            anon_small = min(by[sh][small]["anon_increase_mb"] for sh in shapes)
            bounded = anon_growth <= max(64.0, 0.25 * anon_small)
            file_growth = max(by[sh][big]["file_increase_mb"] - by[sh][small]["file_increase_mb"] for sh in shapes)
            text = (f"From {small:,} to {big:,} rows ({big / small:.0f}x the data): the operator's own (anonymous) "
                    f"memory peak goes {span('anon_increase_mb')} MB (at most {anon_growth:+,.0f} MB), i.e. it "
                    + ("does **not** grow with the table size. " if bounded else "**grows** with the table size. ")
                    + f"VmHWM goes {span('increase_mb')} MB (up to {hwm_growth:+,.0f} MB)")
            if file_growth > 0.5 * max(hwm_growth, 1.0):
                text += (", mostly file-backed pages: `DirectoryStore` opens fragments with "
                         "`pq.ParquetFile(..., memory_map=True)`, so every page of the `_rowid`/`body` columns the "
                         f"scan reads stays mapped and counts in RSS (RssFile {span('file_increase_mb')} MB). Those "
                         "pages are the OS page cache (clean, shared, dropped under memory pressure), but RSS-based "
                         "monitoring and cgroup memory accounting see them.")
            else:
                text += "."
            add(text)
            add("")
        if rss.get("builds"):
            add("Tables built for this: " + "; ".join(
                f"{n:,} rows: {('generate ' + format(b['generate_s'], '.0f') + ' s, ') if b.get('generate_s') else ''}"
                f"load {b['load_s']:.0f} s, {b['fragments']} fragment(s), {b['disk_mb']:,.0f} MB"
                for n, b in rss["builds"].items()) + ".")
            add("")
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--indexed-rows", type=bc._parse_rows, default=1_000_000,
                        help="rows indexed by create_index (default 1,000,000)")
    parser.add_argument("--tail-rows", type=bc._parse_rows, default=10_000,
                        help="rows inserted after the index build, left unindexed (default 10,000)")
    parser.add_argument("--queries", type=int, default=30, help="distinct queries per shape (<= 100)")
    parser.add_argument("--flat-queries", type=int, default=3,
                        help="queries per shape timed (and checked) on the flat scan (default 3)")
    parser.add_argument("--concurrency", type=int, default=5, help="queries in flight in the concurrent mode")
    parser.add_argument("--cold-reps", type=int, default=3, help="repetitions of the cold measurements")
    parser.add_argument("--rss-rows", type=str, default="1m,4m",
                        help="table sizes of the flat-scan memory runs (default 1m,4m)")
    parser.add_argument("--skip-build", action="store_true",
                        help="reuse bench-data/hybrid-<i>+<t>/ (and -optimized/) and flat-noindex-<n>/")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    parser.add_argument("--skip-rss", action="store_true", help="skip the flat-scan memory runs")
    parser.add_argument("--child", choices=("build", "noindex", "rss"), help=argparse.SUPPRESS)
    parser.add_argument("--shape", choices=SHAPES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rss_rows = [bc._parse_rows(x) for x in args.rss_rows.split(",") if x.strip()]
    args.rss_sizes = rss_rows

    if args.child:
        if args.child == "build":
            result = _child_build(args.indexed_rows, args.tail_rows)
        elif args.child == "noindex":
            result = _child_build_noindex(rss_rows[0])
        else:
            result = _child_rss(rss_rows[0], args.shape, KS[0])
        common.emit_result(result)
        return

    if not 1 <= args.queries <= 100:
        parser.error("--queries must be in 1..100 (the frequent band has 100 words)")
    if not 0 <= args.flat_queries <= args.queries:
        parser.error("--flat-queries must be in 0..--queries")
    import corpus

    n_i, n_t = args.indexed_rows, args.tail_rows
    total = n_i + n_t
    env = {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": bc._machine(),
        "load_start": common.loadavg(),
        "versions": {p: bc._version(p) for p in ("datafusion-fts", "datafusion", "pyarrow", "numpy")},
        "other_rss": "n/a (skipped)",
        "commit": common.git_state(),
    }
    paths = _paths(n_i, n_t)
    t0 = time.perf_counter()
    if corpus.write_parquet(paths["parquet"], total, SEED):
        _log(f"wrote {paths['parquet']} in {time.perf_counter() - t0:.1f} s")
    env["parquet_mb"] = paths["parquet"].stat().st_size / 1e6

    build_note = ""
    have = all(paths[k].exists() for k in ("tail_db", "full_db", "build_json"))
    if args.skip_build and have:
        saved = json.loads(paths["build_json"].read_text())
        build = saved["build"]
        build_note = (f"*Build reused from the run of {saved['date']} (`--skip-build`; other processes' CPU "
                      f"then: {saved.get('other_cpu', 'unknown')}).*")
        env["other_build"] = "n/a (build reused)"
    else:
        if args.skip_build:
            _log("--skip-build: built databases missing, building them")
        _log(f"building the tail and optimized databases ({n_i:,} + {n_t:,} rows) in a subprocess ...")
        with bc._OtherCpu() as other:
            build = _run_child(["--child", "build", "--indexed-rows", str(n_i), "--tail-rows", str(n_t)])
        env["other_build"] = other.describe()
        paths["build_json"].write_text(json.dumps(
            {"date": env["date"], "other_cpu": env["other_build"], "build": build}, indent=2))

    env["load_search"] = common.loadavg()
    _log("search benchmark ...")
    with bc._OtherCpu() as other:
        search = _search_bench(paths, args.queries, args.flat_queries, args.concurrency, args.cold_reps, total)
    env["other_search"] = other.describe()
    env["load_after_search"] = common.loadavg()

    rss = None
    if not args.skip_rss:
        rss = {"runs": [], "builds": {}}
        for n in rss_rows:
            p = _noindex_paths(n)
            if not (args.skip_build and p["db"].exists()):
                _log(f"building the no-index table over {n:,} rows (subprocess) ...")
                rss["builds"][n] = _run_child(["--child", "noindex", "--rss-rows", str(n)])
        with bc._OtherCpu() as other:
            for shape in SHAPES:
                for n in rss_rows:
                    _log(f"flat-scan memory: {shape} over {n:,} rows (subprocess) ...")
                    rss["runs"].append(_run_child(["--child", "rss", "--rss-rows", str(n), "--shape", shape]))
        env["other_rss"] = other.describe()
    env["load_end"] = common.loadavg()

    section = _report(args, env, build, build_note, search, rss)
    print(section)
    json_path = DATA / f"bench-hybrid-results-{n_i}+{n_t}.json"
    json_path.write_text(json.dumps({"env": env, "build": build, "search": search, "rss": rss},
                                    indent=1, default=str))
    if not args.no_docs:
        bc.write_docs_section(SECTION, section)
        _log(f"wrote section {SECTION!r} to {DOCS}")


if __name__ == "__main__":
    main()
