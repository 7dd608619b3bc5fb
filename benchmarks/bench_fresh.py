"""Fresh-tier benchmark (issue 6): durable insert throughput with the incremental index on
and off, the first query after a write for several fresh-tier sizes, and query latency
over fresh rows against the same rows indexed.

    python benchmarks/bench_fresh.py [--fresh-rows 100000] [--base-rows 100000] [--no-docs]
    python benchmarks/bench_fresh.py --fresh-rows 20000 --base-rows 20000 --no-docs   # quick

Everything runs in one process, arms interleaved, so a busy machine slows both alike:

* **inserts**: batches of 1, 100, 1,000 and 10,000 rows through the write-ahead log
  (fsync before each call returns), by 1 and by 4 writer threads, into a table whose
  ``body`` is indexed (each insert tokenizes its batch into an in-memory segment) and
  into one with no index (rows only); the two alternate per configuration.
* **first query after a write**: a table of ``--base-rows`` indexed rows plus N fresh
  rows (N from 1,000 up to ``--fresh-rows``); per round one 1-row insert, then the first
  query (``t.search``, k=10), then a second different query; plus what re-indexing those
  fresh rows per write would cost (``build_range`` over them: the work an unindexed
  fresh tier made the first query after each write do before this design). The rows
  tokenized by queries are counted (``db.counters``) and must stay 0.
* **fresh vs indexed**: p50/p95 over the fresh table, then the same rows after
  ``optimize()``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
import bench_core  # noqa: E402  (the shared docs/benchmarks.md writer, machine and load)
import corpus  # noqa: E402

import datafusion_fts as fts  # noqa: E402
from datafusion_fts.index.building.build_range import build_range  # noqa: E402
from datafusion_fts.query import Match  # noqa: E402

SECTION = "## Fresh tier (issue 6)"
BATCHES = ((1, 400), (100, 200), (1_000, 100), (10_000, 10))  # (rows per insert, inserts)


def rows(n_rows: int, seed: int = 7) -> pa.Table:
    return pa.Table.from_batches(list(corpus.generate(n_rows, seed=seed)))


def throughput(data: pa.Table, batch: int, writers: int, inserts: int, indexed: bool) -> tuple[float, float, float]:
    """(rows/s, ms per insert, this process's CPU ms per insert) for ``writers`` threads
    each doing ``inserts`` inserts."""
    path = tempfile.mkdtemp(prefix="fts-fresh-")
    try:
        db = fts.connect(path, config={"fts.memtable_rows": 10**9})
        t = db.create_table("docs", data.slice(0, 1))
        if indexed:
            t.create_index("body")
        chunks = [data.slice((i * batch) % (len(data) - batch), batch) for i in range(writers * inserts)]

        def work(w: int) -> None:
            for i in range(inserts):
                t.insert(chunks[w * inserts + i])

        start, cpu = time.perf_counter(), bench_core._cpu_s()
        threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        elapsed, cpu = time.perf_counter() - start, bench_core._cpu_s() - cpu
        assert t.count_rows() == 1 + writers * inserts * batch
        n = writers * inserts
        return n * batch / elapsed, elapsed / n * 1e3, cpu / n * 1e3
    finally:
        shutil.rmtree(path, ignore_errors=True)


def latency(t: fts.Table, queries: list, k: int) -> tuple[float, float]:
    for q in queries[:5]:
        t.search(q, limit=k, columns=[])
    times = []
    for q in queries:
        start = time.perf_counter()
        t.search(q, limit=k, columns=[])
        times.append(time.perf_counter() - start)
    return float(np.percentile(times, 50) * 1e3), float(np.percentile(times, 95) * 1e3)


def fresh_table(data: pa.Table, base: int, fresh: int, path: str) -> fts.Table:
    """``base`` indexed rows, then ``fresh`` rows inserted in batches of up to 10,000."""
    db = fts.connect(path, config={"fts.memtable_rows": 10**9})
    t = db.create_table("docs", data.slice(0, base))
    t.create_index("body")
    for start in range(base, base + fresh, 10_000):
        t.insert(data.slice(start, min(10_000, base + fresh - start)))
    return t


def first_query_after_write(data: pa.Table, base: int, fresh: int, queries: list, rounds: int) -> dict:
    path = tempfile.mkdtemp(prefix="fts-fresh-")
    try:
        t = fresh_table(data, base, fresh, path)
        db = t.db
        for q in queries[:3]:
            t.search(q, limit=10, columns=[])
        before = dict(db.counters)
        first, second, insert_ms = [], [], []
        pf = time.perf_counter
        for i in range(rounds):
            a = pf()
            t.insert(data.slice(i, 1))
            insert_ms.append((pf() - a) * 1e3)
            a = pf()
            t.search(queries[i % len(queries)], limit=10, columns=[])
            first.append((pf() - a) * 1e3)
            a = pf()
            t.search(queries[(i + 7) % len(queries)], limit=10, columns=[])
            second.append((pf() - a) * 1e3)
        tokenized_by_queries = db.counters["tail_rows_tokenized"] - before.get("tail_rows_tokenized", 0)
        snap = t.snapshot()
        runs = len(db.state.runs("docs"))
        reindex = []  # what the first query after each write used to do: index the fresh rows
        for _ in range(3):
            a = pf()
            build_range(snap, snap.meta.indexes["body"], base, snap.row_count - 1, lambda: "tail")
            reindex.append((pf() - a) * 1e3)
        return {
            "fresh": fresh, "first": float(np.median(first)), "first_p95": float(np.percentile(first, 95)),
            "second": float(np.median(second)), "insert": float(np.median(insert_ms)),
            "reindex": float(np.median(reindex)), "runs": runs, "query_tokenized": tokenized_by_queries,
        }
    finally:
        shutil.rmtree(path, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh-rows", type=int, default=100_000)
    parser.add_argument("--base-rows", type=int, default=100_000, help="indexed rows under the fresh ones")
    parser.add_argument("--rounds", type=int, default=30, help="insert + query rounds per fresh size")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    data = rows(args.base_rows + max(args.fresh_rows, 20_000))
    env = bench_core._machine()
    load0 = os.getloadavg()
    lines = [SECTION, "",
             f"Generated by `python benchmarks/bench_fresh.py --fresh-rows {args.fresh_rows} --base-rows "
             f"{args.base_rows}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {env['cpu']}, "
             f"{env['cores']} cores. Load average at start {load0[0]:.2f} / {load0[1]:.2f} / {load0[2]:.2f}"
             "{LOAD_END}. All arms run in this one process, interleaved."]
    lines += ["", "### Durable inserts (fsync per call), incremental index on and off", "",
              "Each configuration runs with the index on (`body` indexed: each insert tokenizes its batch "
              "into an in-memory segment; runs merge tiered) and off (no index), alternating. *CPU ms* is "
              "this process's CPU time per insert (all threads): what an insert costs whatever else "
              "the machine runs; *rows per CPU-s* = batch rows / CPU time.", "",
              "| batch rows | writers | inserts | rows/s, index on | ms per insert | CPU ms | rows per CPU-s | "
              "rows/s, no index | ms per insert | CPU ms | **on / off (rows/s)** |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    with bench_core._OtherCpu() as other_inserts:
        for batch, inserts in BATCHES:
            for writers in (1, 4):
                per = max(1, inserts // writers)
                arms = (True, False) if (batch + writers) % 2 else (False, True)
                got = {indexed: throughput(data, batch, writers, per, indexed) for indexed in arms}
                (on, on_ms, on_cpu), (off, off_ms, off_cpu) = got[True], got[False]
                lines.append(f"| {batch:,} | {writers} | {per * writers} | {on:,.0f} | {on_ms:.2f} | {on_cpu:.2f} | "
                             f"{batch / on_cpu * 1e3:,.0f} | {off:,.0f} | {off_ms:.2f} | {off_cpu:.2f} | "
                             f"**{on / off:.2f}x** |")
                print(lines[-1], flush=True)
    terms = corpus.query_terms(42, "medium", 40, 11)
    queries = [Match("body", f"{a} {b}") for a, b in zip(terms, terms[1:])]
    sizes = sorted({s for s in (1_000, 10_000, args.fresh_rows) if s <= args.fresh_rows})
    with bench_core._OtherCpu() as other_first:
        first = [first_query_after_write(data, args.base_rows, n, queries, args.rounds) for n in sizes]
    lines += ["", f"### First query after a write ({args.base_rows:,} indexed rows + N fresh rows)", "",
              f"{args.rounds} rounds per size of: a 1-row insert, the first query (k=10), a second different "
              "query. *re-index* = `build_range` over the N fresh rows, what the first query after every "
              "write paid when fresh rows were an unindexed tail (the previous design). *rows tokenized by "
              "queries* counts the rows queries indexed (`db.counters['tail_rows_tokenized']`).", "",
              "| fresh rows N | runs | insert ms | **first query ms** (p50) | p95 | second query ms | "
              "**first / second** | re-index ms (before) | rows tokenized by queries |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in first:
        lines.append(f"| {r['fresh']:,} | {r['runs']} | {r['insert']:.2f} | **{r['first']:.3f}** | "
                     f"{r['first_p95']:.3f} | {r['second']:.3f} | **{r['first'] / r['second']:.2f}x** | "
                     f"{r['reindex']:,.0f} | {r['query_tokenized']} |")
        print(lines[-1], flush=True)
    path = tempfile.mkdtemp(prefix="fts-fresh-")
    with bench_core._OtherCpu() as other_latency:
        try:
            t = fresh_table(data, 1, args.fresh_rows, path)
            choice = t.plan(queries[0])[1].choice
            fresh = {k: latency(t, queries, k) for k in (10, 100)}
            t.optimize()  # flush (the fresh segments are written) and merge
            indexed = {k: latency(t, queries, k) for k in (10, 100)}
            assert t.plan(queries[0])[1].choice == "indexed"
        finally:
            shutil.rmtree(path, ignore_errors=True)
    lines += ["", f"### Query latency: {args.fresh_rows:,} fresh rows vs the same rows indexed", "",
              f"Fresh plan: `{choice}` (the fresh rows' in-memory segments are parts of the index). "
              "Targets: >= 50k rows/s with 1,000-row batches; fresh p50 <= 3x indexed.", "",
              "| k | fresh p50 ms | p95 | indexed p50 ms | p95 | **fresh / indexed (p50)** |",
              "|---:|---:|---:|---:|---:|---:|"]
    for k in (10, 100):
        (fp50, fp95), (ip50, ip95) = fresh[k], indexed[k]
        lines.append(f"| {k} | {fp50:.3f} | {fp95:.3f} | {ip50:.3f} | {ip95:.3f} | **{fp50 / ip50:.2f}x** |")
    load1 = os.getloadavg()
    lines += ["", "Other processes' CPU (machine-wide busy time minus this benchmark's): inserts "
              f"{other_inserts.describe()}; first-query rounds {other_first.describe()}; latency "
              f"{other_latency.describe()}."]
    report = "\n".join(lines).replace("{LOAD_END}", f", at end {load1[0]:.2f} / {load1[1]:.2f} / {load1[2]:.2f}") + "\n"
    print(report)
    if not args.no_docs:
        bench_core.write_docs_section(SECTION, report)


if __name__ == "__main__":
    main()
