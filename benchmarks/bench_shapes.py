"""Query shapes benchmark (issue 17): each shape beside its simplest equivalent.

Trees that mean the same rows and bit-identical scores (a one-clause MUST and its leaf, a
nested Boolean and the flat one, ...) should cost the same. On the seeded Zipf corpus of
``benchmarks/corpus.py`` (the database ``bench-data/fts-<n>/`` that ``bench_core.py``
builds: table ``docs``, index on ``body``), every shape runs beside its simplest
equivalent, query by query, through ``t.search(tree, limit=k, columns=[])`` and, where
SQL can write it, through ``db.sql(...)``. The report gives p50 per shape and the ratio
*shape / simplest equivalent* (lower is better; the target is <= 1.2x), and the path
each one took (``kernel``: the compiled term kernels; ``evaluator``: the general one).
Before timing, each shape's rows and score bits are checked equal to its equivalent's.

Usage::

    python benchmarks/corpus.py 1000000
    python benchmarks/bench_core.py --child ours --rows 1000000   # builds bench-data/fts-<n>/
    python benchmarks/bench_shapes.py                              # 1,000,000 rows

The markdown report is printed and written to ``docs/benchmarks.md`` under
``## Query shapes (issue 17)`` (only that section is replaced).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import sys
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core as bc  # noqa: E402  (corpus query sets, paths, machine info, docs writer)
import common  # noqa: E402  (git state, load average)

SECTION = "## Query shapes (issue 17)"
FIELD = bc.FIELD
KS = (10, 100)
SQL_K = 10
TARGET = 1.2


class Shape(NamedTuple):
    """A tree shape and its simplest equivalent, over one query class's terms."""

    name: str
    terms: str  # the bench_core query class whose term tuples fill it
    shape: str  # how the shape is written (for the report)
    simplest: str
    tree: Callable[[tuple[str, ...]], Any]
    equivalent: Callable[[tuple[str, ...]], Any]
    sql: Callable[[tuple[str, ...]], str] | None = None  # WHERE clauses, or None
    sql_equivalent: Callable[[tuple[str, ...]], str] | None = None


def _shapes() -> list[Shape]:
    from datafusion_fts.query import Boolean, Boost, Match, MultiMatch

    def m(text: str, **kw: Any) -> Match:
        return Match(FIELD, text, **kw)

    def q(text: str) -> str:
        return f"MATCH({FIELD}, '{text}')"

    return [
        Shape("must_one", "frequent", "`Boolean(must=[a])`", "`a`",
              lambda t: Boolean(must=[m(t[0])]), lambda t: m(t[0]),
              lambda t: q(f"+{t[0]}"), lambda t: q(t[0])),
        Shape("should_one", "frequent", "`Boolean(should=[a])`", "`a`",
              lambda t: Boolean(should=[m(t[0])]), lambda t: m(t[0])),
        Shape("must_one_or2", "or2", "`Boolean(must=[Match('a b')])`", "`Match('a b')`",
              lambda t: Boolean(must=[m(" ".join(t))]), lambda t: m(" ".join(t)),
              lambda t: q(f"+({t[0]} {t[1]})"), lambda t: q(f"{t[0]} {t[1]}")),
        Shape("must_one_and2", "and2", "`Boolean(must=[Match('a b', and)])`", "`Match('a b', and)`",
              lambda t: Boolean(must=[m(" ".join(t), operator="and")]), lambda t: m(" ".join(t), operator="and")),
        Shape("multimatch_one", "frequent", "`MultiMatch(a, [body])`", "`a`",
              lambda t: MultiMatch(t[0], (FIELD,)), lambda t: m(t[0])),
        Shape("must_must_not", "must_not", "`Boolean(must=[m], must_not=[f])`", "`Boolean(should=[m], must_not=[f])`",
              lambda t: Boolean(must=[m(t[0])], must_not=[m(t[1])]),
              lambda t: Boolean(should=[m(t[0])], must_not=[m(t[1])]),
              lambda t: f"{q(t[0])} AND NOT {q(t[1])}", lambda t: q(f"{t[0]} -{t[1]}")),
        Shape("must_f_must_not", "and2_fm", "`Boolean(must=[f], must_not=[m])`", "`Boolean(should=[f], must_not=[m])`",
              lambda t: Boolean(must=[m(t[0])], must_not=[m(t[1])]),
              lambda t: Boolean(should=[m(t[0])], must_not=[m(t[1])]),
              lambda t: f"{q(t[0])} AND NOT {q(t[1])}", lambda t: q(f"{t[0]} -{t[1]}")),
        Shape("must_or2_must_not", "or3", "`Boolean(must=[Match('f m1')], must_not=[m2])`",
              "`Boolean(should=[f, m1], must_not=[m2])`",
              lambda t: Boolean(must=[m(f"{t[0]} {t[1]}")], must_not=[m(t[2])]),
              lambda t: Boolean(should=[m(t[0]), m(t[1])], must_not=[m(t[2])]),
              lambda t: f"{q(f'{t[0]} {t[1]}')} AND NOT {q(t[2])}", lambda t: q(f"{t[0]} OR {t[1]} -{t[2]}")),
        Shape("nested_must", "or3", "`Boolean(must=[Boolean(must=[m1, m2]), f])`", "`Boolean(must=[m1, m2, f])`",
              lambda t: Boolean(must=[Boolean(must=[m(t[1]), m(t[2])]), m(t[0])]),
              lambda t: Boolean(must=[m(t[1]), m(t[2]), m(t[0])]),
              lambda t: f"{q(f'+{t[1]} +{t[2]}')} AND {q(t[0])}", lambda t: q(f"+{t[1]} +{t[2]} +{t[0]}")),
        Shape("nested_should", "or3", "`Boolean(should=[Boolean(should=[f, m1]), m2])`", "`Boolean(should=[f, m1, m2])`",
              lambda t: Boolean(should=[Boolean(should=[m(t[0]), m(t[1])]), m(t[2])]),
              lambda t: Boolean(should=[m(t[0]), m(t[1]), m(t[2])]),
              lambda t: q(f"({t[0]} OR {t[1]}) OR {t[2]}"), lambda t: q(f"{t[0]} OR {t[1]} OR {t[2]}")),
        Shape("must_not_union", "or3", "`Boolean(should=[m1], must_not=[Boolean(should=[f, m2])])`",
              "`Boolean(should=[m1], must_not=[f, m2])`",
              lambda t: Boolean(should=[m(t[1])], must_not=[Boolean(should=[m(t[0]), m(t[2])])]),
              lambda t: Boolean(should=[m(t[1])], must_not=[m(t[0]), m(t[2])]),
              lambda t: f"{q(t[1])} AND NOT {q(f'{t[0]} OR {t[2]}')}", lambda t: q(f"{t[1]} -{t[0]} -{t[2]}")),
        Shape("boost_positive", "or2", "`Boost(Boolean(must=[f]), m, 0.5)`", "`Boost(f, m, 0.5)`",
              lambda t: Boost(Boolean(must=[m(t[0])]), m(t[1]), 0.5), lambda t: Boost(m(t[0]), m(t[1]), 0.5)),
        Shape("must_of_boost", "or2", "`Boolean(must=[Boost(f, m, 0.5)])`", "`Boost(f, m, 0.5)`",
              lambda t: Boolean(must=[Boost(m(t[0]), m(t[1]), 0.5)]), lambda t: Boost(m(t[0]), m(t[1]), 0.5)),
    ]


def _sql(where: str, k: int) -> str:
    return f"SELECT _rowid, score() AS s FROM {bc.TABLE} WHERE {where} ORDER BY s DESC LIMIT {k}"


def _path(table: Any, tree: Any) -> str:
    """The path the search took: the term kernels report postings_scored, the general
    evaluator postings_read (from IndexedSearch's metrics after one run)."""
    plan, request = table.plan(tree, limit=10)
    list(plan.execute())
    if request.choice != "indexed":
        return request.choice
    return "kernel" if "postings_scored" in plan.children()[0].metrics.values else "evaluator"


def _hits(result: Any) -> list[tuple[int, str]]:
    return [(r, float(s).hex()) for r, s in zip(result.column(0).to_pylist(), result.column(1).to_pylist())]


def _bench(n_rows: int, n_queries: int, repeats: int, only: set[str] | None) -> dict:
    import datafusion_fts as fts

    db = fts.connect(bc._paths(n_rows)["ours"])
    table = db.table(bc.TABLE)
    assert table.count_rows() == n_rows
    sets = bc._query_sets(n_queries)
    shapes = [s for s in _shapes() if only is None or s.name in only]

    # Exactness first (untimed): the same rows and score bits, through both paths.
    mismatches: dict[str, int] = {}
    for s in shapes:
        bad = 0
        for terms in sets[s.terms]:
            for k in KS:
                a = table.search(s.tree(terms), limit=k, columns=[])
                b = table.search(s.equivalent(terms), limit=k, columns=[])
                bad += _hits(a) != _hits(b)
            if s.sql is not None and s.sql_equivalent is not None:
                a = db.sql(_sql(s.sql(terms), SQL_K)).to_arrow_table()
                b = db.sql(_sql(s.sql_equivalent(terms), SQL_K)).to_arrow_table()
                bad += _hits(a) != _hits(b)
        mismatches[s.name] = bad
    paths = {s.name: (_path(table, s.tree(sets[s.terms][0])), _path(table, s.equivalent(sets[s.terms][0])))
             for s in shapes}

    samples: dict[tuple, list[float]] = {}

    def timed(key: tuple, call: Callable[[], Any], record: bool) -> None:
        a = time.perf_counter_ns()
        call()
        if record:
            samples.setdefault(key, []).append((time.perf_counter_ns() - a) / 1e6)

    def run_pass(parity: int, record: bool) -> None:
        # The two sides alternate which runs first (the second finds the postings in the
        # CPU caches), by query and by pass.
        for s in shapes:
            for i, terms in enumerate(sets[s.terms]):
                sides = ("shape", "simplest") if (i + parity) % 2 == 0 else ("simplest", "shape")
                trees = {"shape": s.tree(terms), "simplest": s.equivalent(terms)}
                for k in KS:
                    for side in sides:
                        tree = trees[side]
                        timed((s.name, "search", k, side), lambda: table.search(tree, limit=k, columns=[]), record)
                if s.sql is not None and s.sql_equivalent is not None:
                    wheres = {"shape": s.sql(terms), "simplest": s.sql_equivalent(terms)}
                    for side in sides:
                        text = _sql(wheres[side], SQL_K)
                        timed((s.name, "sql", SQL_K, side), lambda: db.sql(text).to_arrow_table(), record)

    bc._log("shapes: warm-up pass ...")
    run_pass(0, record=False)
    for r in range(repeats):
        bc._log(f"shapes: timed pass {r + 1}/{repeats} ...")
        gc.collect()
        run_pass(r + 1, record=True)
    p50 = {key: bc._pct(xs, 50) for key, xs in samples.items()}
    return {"shapes": shapes, "p50": p50, "paths": paths, "mismatches": mismatches}


def _report(args: argparse.Namespace, n_rows: int, result: dict, env: dict) -> str:
    lines = [SECTION, ""]
    add = lines.append
    only = f" --only {','.join(sorted(args.only))}" if args.only else ""
    add(f"Generated by `python benchmarks/bench_shapes.py --rows {n_rows} --queries {args.queries} "
        f"--repeats {args.repeats}{only}` on {env['date']}: {env['machine']['cpu']}, "
        f"{env['machine']['cores']} cores; code at commit {env['git']}. Load average at start "
        f"{env['load_start']}, at end {env['load_end']}; other processes' CPU during the run: {env['other']}.")
    add("")
    add(f"Each shape beside its simplest equivalent (same rows, bit-identical scores: checked on every "
        f"query before timing), {args.queries} queries per shape with terms from `corpus.query_terms` "
        "(f = frequent band, m = medium band, as in bench_core's classes), interleaved query by query: "
        f"the two sides take turns running first (by query and by pass); one warm-up pass, then {args.repeats} timed pass(es). `t.search(tree, limit=k, columns=[])` at "
        f"k = {', '.join(map(str, KS))}, and `db.sql(\"SELECT _rowid, score() AS s FROM docs WHERE ... "
        f"ORDER BY s DESC LIMIT {SQL_K}\").to_arrow_table()` where SQL can write the shape. p50 in ms; "
        f"**ratio** = shape / simplest equivalent, lower is better (target <= {TARGET}x). *path*: "
        "`kernel` = the compiled term kernels, `evaluator` = the general evaluator (shape / equivalent).")
    add("")
    add("| shape | simplest equivalent | path | k | search p50 shape | simplest | **ratio** | "
        f"SQL p50 shape (k={SQL_K}) | simplest | **ratio** |")
    add("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    p50 = result["p50"]
    worst = []
    for s in result["shapes"]:
        path = " / ".join(result["paths"][s.name])
        for i, k in enumerate(KS):
            a, b = p50[(s.name, "search", k, "shape")], p50[(s.name, "search", k, "simplest")]
            worst.append(a / b)
            cells = [s.shape if i == 0 else "", s.simplest if i == 0 else "", path if i == 0 else "", str(k),
                     bc._fmt_ms(a), bc._fmt_ms(b), f"**{a / b:.2f}x**"]
            key = (s.name, "sql", SQL_K, "shape")
            if i == 0 and key in p50:
                c, d = p50[key], p50[(s.name, "sql", SQL_K, "simplest")]
                worst.append(c / d)
                cells += [bc._fmt_ms(c), bc._fmt_ms(d), f"**{c / d:.2f}x**"]
            else:
                cells += ["", "", ""]
            add("| " + " | ".join(cells) + " |")
    add("")
    bad = {name: n for name, n in result["mismatches"].items() if n}
    add(f"Exactness: {'every shape returned the same rows and score bits as its equivalent' if not bad else 'MISMATCHES: ' + repr(bad)}. "
        f"Ratios within the {TARGET}x target: {sum(r <= TARGET for r in worst)} of {len(worst)} "
        f"(worst {max(worst):.2f}x).")
    add("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=bc._parse_rows, default=1_000_000, help="corpus rows (default 1,000,000)")
    parser.add_argument("--queries", type=int, default=20, help="distinct queries per shape (<= 100)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes after the warm-up pass")
    parser.add_argument("--only", type=lambda text: set(text.split(",")), default=None,
                        help="comma-separated shape names to run (default: all)")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    n_rows = args.rows
    if not (bc._paths(n_rows)["ours"]).exists():
        parser.error(f"{bc._paths(n_rows)['ours']} does not exist: build it with bench_core.py --child ours")
    env = {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": bc._machine(),
        "git": common.git_state(),
        "load_start": common.loadavg(),
    }
    with bc._OtherCpu() as other:
        result = _bench(n_rows, args.queries, args.repeats, args.only)
    env["other"] = other.describe()
    env["load_end"] = common.loadavg()
    section = _report(args, n_rows, result, env)
    print(section)
    if not args.no_docs:
        bc.write_docs_section(SECTION, section)
        bc._log(f"wrote section {SECTION!r} to {bc.DOCS}")


if __name__ == "__main__":
    main()
