"""Ray executor benchmark (issue 9): search latency by query class and index build time on
1, 2 and 4 actors against the single-process plan, on one machine.

    python benchmarks/bench_ray.py [--rows 1000000] [--actors 1,2,4] [--queries 20] [--no-docs]

For each actor count the index is rebuilt by Ray tasks (one row range per actor), then
every query runs on the single-process plan and on Ray alternately (A/B interleaved, the
same index), and every answer is compared: rows and float64 scores must be identical.
The machine's other load is sampled before Ray starts and reported with the numbers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
import bench_core  # noqa: E402  (query classes, the docs/benchmarks.md writer)
import corpus  # noqa: E402

import datafusion_fts as fts  # noqa: E402

SECTION = "## Ray executor (issue 9)"
K = 10


def machine_busy(seconds: float = 5.0) -> float:
    """Cores busy machine-wide over ``seconds`` (before this benchmark starts Ray)."""
    busy0, t0 = bench_core._busy_s(), time.perf_counter()
    time.sleep(seconds)
    return (bench_core._busy_s() - busy0) / (time.perf_counter() - t0)


def timed(t: fts.Table, query) -> tuple[float, pa.Table]:
    start = time.perf_counter()
    result = t.search(query, limit=K, columns=[])
    return (time.perf_counter() - start) * 1e3, result


def run(t: fts.Table, queries: dict, repeats: int) -> dict:
    """p50 ms per class for the local plan and for Ray (interleaved), and mismatches."""
    settings = t.db.settings
    out: dict[str, dict] = {}
    mismatches = 0
    for cls, terms_list in queries.items():
        samples: dict[str, list[float]] = {"local": [], "ray": []}
        for rep in range(repeats + 1):  # the first pass warms caches and is not counted
            for terms in terms_list:
                query = bench_core._our_tree(cls, terms)
                answers = {}
                for executor in ("local", "ray") if rep % 2 == 0 else ("ray", "local"):
                    settings.set("fts.executor", executor)
                    ms, answers[executor] = timed(t, query)
                    if rep:
                        samples[executor].append(ms)
                mismatches += not answers["local"].equals(answers["ray"])
        out[cls] = {e: float(np.median(v)) for e, v in samples.items()}
    settings.set("fts.executor", "local")
    return {"classes": out, "mismatches": mismatches}


def distributed_metrics(t: fts.Table, query) -> dict:
    t.db.settings.set("fts.executor", "ray")
    plan, _ = t.plan(query, limit=K)
    list(plan.execute())
    t.db.settings.set("fts.executor", "local")
    return dict(plan.children()[0].metrics.values)


def round_trip_ms(t: fts.Table, calls: int = 200) -> float:
    """p50 of one empty actor call (driver -> actor -> driver)."""
    import ray

    actor = t.db.distributed_executor()
    from datafusion_fts.distributed.executor import pool

    handle = pool(actor.config, actor.ray_init).actors[0]
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        ray.get(handle.pid.remote())
        samples.append((time.perf_counter() - start) * 1e3)
    return float(np.median(samples))


def merge_us(inputs: int, k: int = K, repeats: int = 200) -> float:
    """p50 of merging ``inputs`` top-k lists of ``k`` rows as the driver does: the replies
    concatenated into one batch (DistributedSearch), then GlobalTopK."""
    from datafusion_fts.operators.base import ExecutionPlan, search_batch
    from datafusion_fts.operators.global_topk import GlobalTopK

    rng = np.random.default_rng(0)

    class Replies(ExecutionPlan):
        def __init__(self) -> None:
            super().__init__()
            self.replies = [(np.arange(i * k, (i + 1) * k, dtype=np.int64), rng.random(k)) for i in range(inputs)]

        def display(self) -> str:
            return "Replies"

        def execute(self):  # as DistributedSearch.execute: every reply in one batch
            yield search_batch(np.concatenate([r for r, _ in self.replies]),
                               np.concatenate([s for _, s in self.replies]))

    plan = GlobalTopK([Replies()], k)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        list(plan.execute())
        samples.append((time.perf_counter() - start) * 1e6)
    return float(np.median(samples))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--actors", default="1,2,4")
    parser.add_argument("--queries", type=int, default=20, help="distinct queries per class")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    actor_counts = [int(a) for a in args.actors.split(",")]

    busy = machine_busy()
    load_start = os.getloadavg()
    data = pa.Table.from_batches(list(corpus.generate(args.rows, seed=bench_core.SEED)))
    queries = bench_core._query_sets(args.queries)
    path = tempfile.mkdtemp(prefix="fts-ray-")
    import ray

    ray.init(num_cpus=os.cpu_count(), object_store_memory=512 << 20, include_dashboard=False, log_to_driver=False)
    try:
        db = fts.connect(path)
        t = db.create_table("docs", data)
        del data
        start = time.perf_counter()
        t.create_index("body")
        builds = {"local": time.perf_counter() - start}
        results = {}
        metrics = {}
        rtt = {}
        warm = db.create_table("warm", t.to_arrow().slice(0, 2000).drop_columns(["_rowid"]))
        db.settings.set("fts.executor", "ray")
        db.settings.set("fts.ray_actors", max(actor_counts))
        warm.create_index("body")  # Ray's task workers start (and import us) once, untimed
        for actors in actor_counts:
            db.settings.set("fts.ray_actors", actors)
            db.settings.set("fts.executor", "ray")
            start = time.perf_counter()
            t.create_index("body")
            builds[actors] = time.perf_counter() - start
            db.settings.set("fts.executor", "local")
            print(f"{actors} actors: build {builds[actors]:.1f} s", flush=True)
            results[actors] = run(t, queries, args.repeats)
            metrics[actors] = distributed_metrics(t, bench_core._our_tree("or2", queries["or2"][0]))
            rtt[actors] = round_trip_ms(t)
            print(actors, results[actors], metrics[actors], flush=True)
    finally:
        ray.shutdown()
        shutil.rmtree(path, ignore_errors=True)
    load_end = os.getloadavg()
    merges = {n: merge_us(n) for n in (1, 10, 100)}
    report = render(args, builds, results, metrics, rtt, merges, busy, load_start, load_end)
    print(report)
    if not args.no_docs:
        bench_core.write_docs_section(SECTION, report)


def render(args, builds, results, metrics, rtt, merges, busy, load_start, load_end) -> str:
    counts = list(results)
    lines = [
        SECTION, "",
        f"`python benchmarks/bench_ray.py --rows {args.rows} --actors {args.actors} --queries {args.queries}"
        f" --repeats {args.repeats}`, {time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} cores, one machine "
        "(actors are processes of a local Ray cluster; every 'node' shares the same 2 cores and page cache).",
        "",
        f"Load: {busy:.2f} cores busy machine-wide in the 5 s before Ray started (other engineers' work); "
        f"load average {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end.",
        "",
        "Index build (body column), seconds: local " + f"{builds['local']:.1f}; "
        + "; ".join(f"Ray {a} task{'s' if a > 1 else ''} {builds[a]:.1f}" for a in counts) + ".",
        "",
        "Search p50 (ms, k = 10, `t.search`), the single-process plan and Ray interleaved over the same "
        "index (Ray's build: one segment per actor):",
        "",
        "| class | " + " | ".join(f"local ({a} seg) | Ray {a} actor{'s' if a > 1 else ''} | ratio" for a in counts) + " |",
        "| --- |" + " --- | --- | --- |" * len(counts),
    ]
    for cls in results[counts[0]]["classes"]:
        cells = []
        for a in counts:
            c = results[a]["classes"][cls]
            cells += [f"{c['local']:.2f}", f"{c['ray']:.2f}", f"{c['ray'] / c['local']:.1f}x"]
        lines.append(f"| {bench_core.CLASS_DOC[cls][0]} | " + " | ".join(cells) + " |")
    lines += ["", "Mismatched answers (rows or scores, Ray vs local): "
              + ", ".join(f"{a} actors: {results[a]['mismatches']}" for a in counts) + ".", "",
              "Per-query exchange for a 2-term OR (DistributedSearch metrics):", ""]
    for a in counts:
        m = metrics[a]
        lines.append(
            f"- {a} actor(s): {m.get('messages', 0)} messages, {m.get('stats_bytes', 0)} B of statistics, "
            f"{m.get('query_bytes', 0)} B of bound query + statistics out, {m.get('result_bytes', 0)} B of "
            f"results; phase one {m.get('phase1_ms', 0):.2f} ms, phase two {m.get('phase2_ms', 0):.2f} ms."
        )
    lines += ["", "Model inputs measured in the same run (see docs/scaling.md): an empty actor call "
              + ", ".join(f"{rtt[a]:.2f} ms p50 with {a} actor(s) up" for a in counts)
              + "; GlobalTopK merging n top-10 lists "
              + ", ".join(f"n={n}: {us:.0f} µs" for n, us in merges.items()) + "."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
