"""Search threads scale (issue 33): the kernels release the GIL, so two threads searching
one table answer about twice the queries per second of one.

    python benchmarks/bench_threads.py [--rows 200000] [--queries 400] [--rounds 3] [--no-docs]

One indexed table of the seeded corpus (``corpus.py``) in memory; the same ``--queries``
queries (two frequent terms OR'd, two AND'd, a medium term: ids and scores, k=10, the
Python API) run on one thread, then split over two threads (A/B alternated ``--rounds``
times). Reported: queries per second of each and their ratio; ~2.0 means the kernels run
in parallel, ~1.0 that the GIL serializes them. Meaningful only on an otherwise idle
machine of 2 or more cores (the machine's other load is printed). The report is printed
and written to ``docs/benchmarks.md`` under ``## Search threads (issue 33)``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
import corpus  # noqa: E402

import datafusion_fts as fts  # noqa: E402
from datafusion_fts.query import Boolean, Match  # noqa: E402

SECTION = "## Search threads (issue 33)"


def queries(n: int) -> list:
    frequent = corpus.query_terms(42, "frequent", 100, rng_seed=1)
    medium = corpus.query_terms(42, "medium", n, rng_seed=2)
    out = []
    for i in range(n):
        a, b = frequent[(2 * i) % 100], frequent[(7 * i + 1) % 100]
        out.append([Match("body", f"{a} {b}"), Boolean(must=[Match("body", a), Match("body", b)]),
                    Match("body", medium[i])][i % 3])
    return out


def run(table: fts.Table, work: list, threads: int) -> float:
    """Queries per second of ``work`` split over ``threads`` threads."""
    chunks = [work[i::threads] for i in range(threads)]
    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda chunk: [table.search(q, limit=10) for q in chunk], chunks))
    return len(work) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    db = fts.connect()
    table = db.create_table("docs", pa.Table.from_batches(list(corpus.generate(args.rows))))
    table.create_index("body")
    work = queries(args.queries)
    run(table, work[:20], 1)  # (warm: segments loaded)
    one, two = [], []
    for _ in range(args.rounds):
        one.append(run(table, work, 1))
        two.append(run(table, work, 2))
    q1, q2 = statistics.median(one), statistics.median(two)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    text = "\n".join([
        SECTION, "",
        f"`python benchmarks/bench_threads.py --rows {args.rows} --queries {args.queries} --rounds {args.rounds}` at "
        f"`{commit}`, {os.cpu_count()} cores, load average {load:.2f} before. The Python API's `t.search(q, limit=10)` "
        "over a 2-term OR, a 2-term AND and a medium term, in turn; medians of the rounds.", "",
        f"**1 thread: {q1:,.0f} queries/s; 2 threads: {q2:,.0f} queries/s; 2 threads / 1 thread = {q2 / q1:.2f}x** "
        "(higher is better; 2.0 is perfect scaling on 2 cores).", "",
    ])
    print(text)
    if not args.no_docs:
        import bench_core

        bench_core.write_docs_section(SECTION, text)


if __name__ == "__main__":
    main()
