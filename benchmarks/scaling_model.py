"""The cost model of docs/scaling.md, evaluated for 10M-1B rows over 10-100 nodes.

    python benchmarks/scaling_model.py [--markdown]

A distributed query costs

    driver   : plan + partition lookup (cached)                         t_plan
    phase 1  : A actor calls (request + reply)                        t_submit*A + max_i(rtt_i + t_stats)
    phase 2  : A actor calls (request + top-k reply)                  t_submit*A + max_i(rtt_i + t_score(N/A))
    merge    : GlobalTopK over A*k rows                                 t_merge(A)

with A actors (one per node here). Every input below says where it comes from: MEASURED
(bench_ray.py / bench_core.py on this 2-core machine, with its load) or ASSUMED (a
datacenter network and nodes this workplace does not have).
"""

from __future__ import annotations

import argparse
import math

# MEASURED, bench_ray.py --rows 1000000 (docs/benchmarks.md "Ray executor", a busy machine:
# load average 10-20 on 2 cores): the single-process plan's p50 per class at 1M rows, ms.
# Scoring a share of n rows is taken to cost T_FIXED + (p50_1M - T_FIXED) * n / 1M:
# linear in the postings a term has (a Zipf term's df grows with the rows). Block-max
# pruning makes top-k disjunctions grow slower than that, so large shares are over-estimated.
P50_1M_MS = {"frequent": 1.89, "rare": 0.37, "or3": 1.43, "and2": 0.79}
T_FIXED_MS = 0.24  # MEASURED: local p50 of a rare term at 20k rows (the per-call floor)
# MEASURED, bench_ray.py: phase-one bytes per actor (request + reply, 2 terms) and
# phase-two bytes out per actor (bound query + statistics); results are 16 B per row.
STATS_BYTES_PER_ACTOR = 298
QUERY_BYTES_PER_ACTOR = 475
# MEASURED, bench_ray.py: merging A top-10 replies on the driver took 65-207 µs for A = 1,
# 10, 100 across runs; modelled as 0.1 ms + 1 µs per actor.
MERGE_FIXED_MS, MERGE_PER_ACTOR_MS = 0.1, 0.001
# ASSUMED: a Ray actor call between two nodes of one datacenter (network RTT ~0.1-0.2 ms
# plus Ray's own overhead); on this one loaded machine an empty call measured 1.0-1.6 ms.
RTT_P50_MS = 0.5
# ASSUMED: the slowest of A calls, p50 * (1 + SIGMA * sqrt(2 ln A)) (a lognormal tail with
# SIGMA = 0.3); with A = 100 that is ~1.9x the median.
RTT_SIGMA = 0.3
# ASSUMED: driver-side cost to submit one actor call (Ray: tens of µs per call).
SUBMIT_MS = 0.05
T_STATS_MS = 0.05  # MEASURED order: a share's df lookups for a few terms (binary searches)
T_PLAN_MS = 0.6  # MEASURED: query parse + bind + partition lookup on the driver
# MEASURED, bench_core.py (quiet machine): the index is 422 MB per 1M rows (no positions)
# and one 2-core process builds 81,600 rows/s.
INDEX_BYTES_PER_ROW = 422
BUILD_ROWS_PER_S_PER_NODE = 81_600


def merge_ms(actors: int) -> float:
    return MERGE_FIXED_MS + MERGE_PER_ACTOR_MS * actors


def slowest_rtt_ms(actors: int) -> float:
    return RTT_P50_MS * (1 + RTT_SIGMA * math.sqrt(2 * math.log(max(actors, 2))))


def latency_ms(rows: int, actors: int, cls: str) -> float:
    score = T_FIXED_MS + (P50_1M_MS[cls] - T_FIXED_MS) * rows / actors / 1e6
    phase1 = SUBMIT_MS * actors + slowest_rtt_ms(actors) + T_STATS_MS
    phase2 = SUBMIT_MS * actors + slowest_rtt_ms(actors) + score
    return T_PLAN_MS + phase1 + phase2 + merge_ms(actors)


def table(markdown: bool) -> str:
    sizes = (10_000_000, 100_000_000, 1_000_000_000)
    nodes = (10, 25, 50, 100)
    classes = tuple(P50_1M_MS)
    out = []
    header = ["rows", "nodes", "rows/node", "index GB/node", "build min", "actor calls", "stats KB",
              *[f"{c} ms" for c in classes]]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + " --- |" * len(header))
    for n in sizes:
        for a in nodes:
            gb = n / a * INDEX_BYTES_PER_ROW / 1e9
            build = n / a / BUILD_ROWS_PER_S_PER_NODE / 60
            cells = [f"{n / 1e6:,.0f}M", str(a), f"{n / a / 1e6:.1f}M", f"{gb:.1f}", f"{build:.1f}", str(2 * a),
                     f"{a * STATS_BYTES_PER_ACTOR / 1e3:.1f}"]
            cells += [f"{latency_ms(n, a, c):.1f}" for c in classes]
            out.append("| " + " | ".join(cells) + " |")
    text = "\n".join(out)
    return text if markdown else text.replace("|", " ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true")
    print(table(parser.parse_args().markdown))


if __name__ == "__main__":
    main()
