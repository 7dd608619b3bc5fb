"""Plain statements through ``db.sql`` beside ``ctx.sql`` (issue 31): what routing a statement
the project does not own costs a DataFusion user.

A mix of statements with no full-text feature (queries over DataFusion's own tables and over
a managed table, a join, an aggregate, a window, EXPLAIN, SHOW, DESCRIBE, information_schema,
statements sqlglot cannot parse) runs through ``ctx.sql(s).to_arrow_table()`` on a plain
``SessionContext``, through ``db.sql(s).to_arrow_table()`` on ``connect(ctx=...)`` of
another session holding the same tables, and through ``ctx.sql`` on that session,
interleaved statement by statement, ``--repeats`` times each. Reported per statement and
over the mix: the medians, ``db.sql`` over ``ctx.sql`` on the plain session (what a user
sees: the routing and the session's schema provider, a Python one, which DataFusion asks
for each table a statement names), ``db.sql`` over ``ctx.sql`` on its own session (the
routing alone), and the median of the decision (``sql/text/classify.py``: split and classify).

Usage::

    python benchmarks/bench_plain_sql.py                # 2,000 repeats
    python benchmarks/bench_plain_sql.py --repeats 200  # quick

The report is printed and written to ``docs/benchmarks.md`` under its own section.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import statistics
import sys
import time
from pathlib import Path

import datafusion
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datafusion_fts as fts  # noqa: E402
from bench_core import _machine, write_docs_section  # noqa: E402
from datafusion_fts.sql.text.classify import classify, split  # noqa: E402

TITLE = "## Plain SQL through db.sql (issue 31)"
ROWS = 1_000
# (label, statement): none holds a word of ours, but "docs" is a managed table in db.sql's session.
STATEMENTS = [
    ("select from a DataFusion table", "SELECT k, v FROM kv WHERE k < 10 ORDER BY k"),
    ("select from a managed table", "SELECT id, title FROM docs WHERE id < 10 ORDER BY id"),
    ("aggregate", "SELECT year, count(*) AS n FROM kv JOIN docs ON kv.k = docs.id GROUP BY year ORDER BY year"),
    ("window", "SELECT k, sum(v) OVER (ORDER BY k ROWS 2 PRECEDING) AS s FROM kv ORDER BY k LIMIT 5"),
    ("star with EXCLUDE", "SELECT * EXCLUDE (v) FROM kv ORDER BY k LIMIT 3"),
    ("expression", "SELECT 1 + 2 * 3 AS x, upper('abc') AS y, CAST(500 AS DECIMAL(10, -2)) AS z"),
    ("EXPLAIN FORMAT TREE", "EXPLAIN FORMAT TREE SELECT k FROM kv WHERE v > 3"),
    ("DESCRIBE", "DESCRIBE kv"),
    ("information_schema", "SELECT table_name FROM information_schema.tables ORDER BY table_name"),
    ("SHOW", "SHOW datafusion.execution.batch_size"),
    ("CTE and UNION", "WITH a AS (SELECT k FROM kv WHERE k < 3) SELECT k FROM a UNION ALL SELECT 99 ORDER BY 1"),
]


def _tables(ctx: datafusion.SessionContext) -> None:
    ctx.register_record_batches("kv", [[pa.record_batch({"k": list(range(ROWS)), "v": [i % 7 for i in range(ROWS)]})]])


def _docs() -> pa.Table:
    return pa.table({"id": list(range(ROWS)), "title": [f"t{i}" for i in range(ROWS)],
                     "year": [2000 + i % 20 for i in range(ROWS)]})


def _timed(run, sql: str) -> float:
    start = time.perf_counter()
    run(sql).to_arrow_table()
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2_000)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()

    plain = datafusion.SessionContext(datafusion.SessionConfig().with_information_schema(True))
    _tables(plain)
    plain.from_arrow(_docs(), name="docs")
    ours = datafusion.SessionContext(datafusion.SessionConfig().with_information_schema(True))
    _tables(ours)
    db = fts.connect(ctx=ours)
    db.create_table("docs", _docs())
    managed = db.manifest.tables.__contains__

    rows = []
    all_plain, all_ours, all_decide = [], [], []
    gc.disable()
    for label, sql in STATEMENTS:
        for run in (plain.sql, db.sql, ours.sql):  # (warm-up)
            _timed(run, sql)
        t_plain, t_ours, t_same, t_decide = [], [], [], []
        for _ in range(args.repeats):
            t_plain.append(_timed(plain.sql, sql))
            t_ours.append(_timed(db.sql, sql))
            t_same.append(_timed(ours.sql, sql))
            start = time.perf_counter()
            for part in split(sql):
                classify(part, managed)
            t_decide.append((time.perf_counter() - start) * 1e3)
        gc.collect()
        p, o, d = statistics.median(t_plain), statistics.median(t_ours), statistics.median(t_decide)
        same = statistics.median(t_same)
        rows.append((label, p, o, d, same))
        all_plain += t_plain
        all_ours += t_ours
        all_decide += t_decide
        print(f"{label:32} ctx.sql {p:7.3f} ms  db.sql {o:7.3f} ms  +{o - p:6.3f} ms  routing +{o - same:6.3f} ms"
              f"  decision {d * 1e3:6.1f} us", flush=True)
    gc.enable()
    diffs = [o - p for _, p, o, _, _ in rows]
    routing = [o - same for _, _, o, _, same in rows]
    lines = [
        TITLE,
        "",
        f"Run {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')} by `benchmarks/bench_plain_sql.py --repeats {args.repeats}`"
        f" on {_machine()['cpu']} ({_machine()['cores']} cores): each statement through `ctx.sql` on a plain"
        " session and through `db.sql` (`connect(ctx=...)`, `docs` a managed table), interleaved, collected"
        " with `to_arrow_table()`. Medians. *Routing* is `db.sql` over `ctx.sql` on `db.sql`'s own session"
        " (whose default schema is the database's, a Python schema provider DataFusion asks for each table);"
        " the decision is `sql/text/classify.py` alone (split and classify).",
        "",
        "| statement | ctx.sql ms | db.sql ms | db.sql - ctx.sql ms | routing ms | decision µs |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, p, o, d, same in rows:
        lines.append(f"| {label} | {p:.3f} | {o:.3f} | {o - p:+.3f} | {o - same:+.3f} | {d * 1e3:.1f} |")
    lines += [
        f"| **median of the statements** | {statistics.median(r[1] for r in rows):.3f} |"
        f" {statistics.median(r[2] for r in rows):.3f} | **{statistics.median(diffs):+.3f}** |"
        f" **{statistics.median(routing):+.3f}** | **{statistics.median(all_decide) * 1e3:.1f}** |",
        "",
    ]
    report = "\n".join(lines)
    print(report)
    if not args.no_docs:
        write_docs_section(TITLE, report)


if __name__ == "__main__":
    main()
