"""Two versions of the engine on one database: ids-only top-10 latency per query class,
each version in its own interpreter, runs alternating (an A/B of source trees, for a
regression hunt: the database must be one both versions read, i.e. written by the older).

Each run opens the database, answers every query of bench_core's classes once as a
warm-up, then ``--repeats`` timed passes of ``t.search(tree, limit=10, columns=[])``;
the median per class of a run, then the median of the runs. Ratios: B / A, lower is
better for B.

Usage::

    python benchmarks/bench_versions.py --db /tmp/db02b \\
        --a /tmp/venv-numba/bin/python:/tmp/w02b --b .venv/bin/python:. --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLASSES = ("frequent", "rare", "or2", "or3", "and2", "and2_fm", "must_not")


def child(src: str, db: str, queries: int, repeats: int) -> dict[str, float]:
    """(In the version's interpreter.) Median ms per class."""
    sys.path[:0] = [str(Path(src) / "src"), str(HERE)]
    import bench_core as bc

    import datafusion_fts as fts

    table = fts.connect(db).table("docs")
    sets = bc._query_sets(queries)
    trees = {c: [bc._our_tree(c, terms) for terms in sets[c]] for c in CLASSES}
    for c in CLASSES:
        for tree in trees[c]:
            table.search(tree, limit=10, columns=[])
    out = {}
    for c in CLASSES:
        times = []
        for _ in range(repeats):
            for tree in trees[c]:
                t0 = time.perf_counter()
                table.search(tree, limit=10, columns=[])
                times.append(time.perf_counter() - t0)
        out[c] = statistics.median(times) * 1e3
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="a database both versions read")
    parser.add_argument("--a", help="PYTHON:SOURCE_TREE of version A")
    parser.add_argument("--b", help="PYTHON:SOURCE_TREE of version B")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--child", nargs=2, metavar=("SRC", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.queries, args.repeats)))
        return
    if not (args.db and args.a and args.b):
        parser.error("--db, --a and --b are needed")
    runs: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
    for _ in range(args.runs):
        for name in ("a", "b"):
            python, src = getattr(args, name).split(":", 1)
            done = subprocess.run([python, __file__, "--child", src, args.db, "--queries", str(args.queries),
                                   "--repeats", str(args.repeats)], capture_output=True, text=True, check=True)
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print("| class | A ms | B ms | B / A |\n|---|---:|---:|---:|")
    for c in CLASSES:
        a = statistics.median(r[c] for r in runs["a"])
        b = statistics.median(r[c] for r in runs["b"])
        print(f"| {c} | {a:.4f} | {b:.4f} | {b / a:.2f} |")


if __name__ == "__main__":
    main()
