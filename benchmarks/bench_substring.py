"""Substring search at 1M rows (issue 43): the user's own LIKE, ILIKE, regexp_like and strpos
through ``db.sql`` over a managed table with an n-gram index on ``body``, side by side in
one run with DataFusion's scan of the same rows (its own session over the corpus's Parquet
file), Lance's NGRAM index (pylance: ``contains(body, 'x')``, the form it accelerates) and
SQLite FTS5's trigram tokenizer (``body LIKE '%x%'``, which FTS5 answers from its index).

Every statement returns the matching rows' ``id`` and ``title``. "index off" is the same
statement on the same managed table with ``fts.substring_index = false``: DataFusion scans
the table's own files. Needles are words of the
seeded corpus (``benchmarks/corpus.py``) of known Zipf ranks, so each matches a known share
of rows (counted by DataFusion's scan, checked equal across systems). Each statement runs
once to warm up, then ``--repeats`` times, interleaved across systems; medians.

Usage::

    python benchmarks/bench_substring.py                 # 1M rows, written to docs/benchmarks.md
    python benchmarks/bench_substring.py --rows 100000 --no-docs --no-sqlite
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("LANCE_LOG", "error")

import bench_core
import corpus
import datafusion
import pyarrow as pa
import pyarrow.parquet as pq
from common import git_state

import datafusion_fts as fts

SECTION = "## Substring search: LIKE, ILIKE and regular expressions (issue 43)"
# Zipf ranks of the needles: from a word in ~0.004 % of rows to one in 7.3 % of them
# (ranks 100 and 60: 4.5 % and 7.3 %, past the candidate share: DataFusion scans).
RANKS = (120_000, 30_000, 5_000, 600, 100, 60)


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _cases(vocab: list[str]) -> list[tuple[str, str, str | None, str | None]]:
    """(label, predicate over body, Lance filter, SQLite predicate): None where the system has
    no such form."""
    out = []
    for rank in RANKS:
        word = vocab[rank]
        out.append((f"LIKE '%{word}%' (rank {rank:,})", f"body LIKE '%{word}%'", f"contains(body, '{word}')",
                    f"body LIKE '%{word}%'"))
    rare, medium = vocab[RANKS[0]], vocab[RANKS[2]]
    out.append((f"ILIKE '%{rare.upper()}%'", f"body ILIKE '%{rare.upper()}%'", None, f"body LIKE '%{rare.upper()}%'"))
    out.append((f"strpos(body, '{rare}') > 0", f"strpos(body, '{rare}') > 0", f"contains(body, '{rare}')",
                f"instr(body, '{rare}') > 0"))
    out.append((f"regexp_like(body, '{rare}|{vocab[RANKS[1]]}')", f"regexp_like(body, '{rare}|{vocab[RANKS[1]]}')",
                None, None))
    out.append((f"body ~ '{medium} [a-z]+ {medium[:3]}'", f"body ~ '{medium} [a-z]+ {medium[:3]}'", None, None))
    return out


def _timed(run) -> tuple[float, int]:
    start = time.perf_counter()
    n = run()
    return (time.perf_counter() - start) * 1e3, n


def run(n_rows: int, repeats: int, sqlite: bool, work: Path) -> str:
    source = work / "corpus.parquet"
    pq.write_table(pa.Table.from_batches(list(corpus.generate(n_rows))), source, row_group_size=100_000)
    data = pq.read_table(source)
    builds: dict[str, tuple[float, int]] = {}

    # ours: a managed table, its body's n-gram index
    db = fts.connect(work / "ours")
    table = db.create_table("docs", data)
    data_bytes = _dir_bytes(work / "ours")
    start = time.perf_counter()
    table.create_index("body", kind="ngram")
    builds["ours (n-gram index)"] = (time.perf_counter() - start, _dir_bytes(work / "ours") - data_bytes)

    ctx = datafusion.SessionContext()
    ctx.register_parquet("docs", str(source))

    import lance

    start = time.perf_counter()
    ds = lance.write_dataset(data, work / "lance")
    lance_data = _dir_bytes(work / "lance")
    start = time.perf_counter()
    ds.create_scalar_index("body", "NGRAM")
    builds["Lance NGRAM"] = (time.perf_counter() - start, _dir_bytes(work / "lance") - lance_data)

    con = None
    if sqlite:
        con = sqlite3.connect(work / "fts5.db")
        con.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title UNINDEXED, body, tokenize='trigram')")
        con.commit()
        before = os.path.getsize(work / "fts5.db")
        start = time.perf_counter()
        con.executemany("INSERT INTO docs VALUES (?, ?, ?)", zip(*(data.column(c).to_pylist() for c in ("id", "title", "body"))))
        con.commit()
        builds["SQLite FTS5 trigram"] = (time.perf_counter() - start, os.path.getsize(work / "fts5.db") - before)

    cases = _cases(corpus.vocabulary())
    plain = fts.connect(work / "ours", config={"fts.substring_index": False})  # (the same table, index off)
    systems = {
        "ours": lambda p, lf, sp: db.sql(f"SELECT id, title FROM docs WHERE {p}").to_arrow_table().num_rows,
        "ours, index off": lambda p, lf, sp: plain.sql(
            f"SELECT id, title FROM docs WHERE {p}").to_arrow_table().num_rows,
        "DataFusion scan": lambda p, lf, sp: ctx.sql(f"SELECT id, title FROM docs WHERE {p}").to_arrow_table().num_rows,
        "Lance NGRAM": lambda p, lf, sp: None if lf is None else ds.to_table(columns=["id", "title"], filter=lf).num_rows,
    }
    if con is not None:
        systems["SQLite FTS5 trigram"] = lambda p, lf, sp: None if sp is None else len(
            con.execute(f"SELECT id, title FROM docs WHERE {sp}").fetchall())
    times: dict[tuple[str, str], list[float]] = {}
    counts: dict[tuple[str, str], int | None] = {}
    for rep in range(repeats + 1):
        for label, predicate, lance_filter, sqlite_predicate in cases:
            for name, system in systems.items():
                ms, n = _timed(lambda: system(predicate, lance_filter, sqlite_predicate))
                if n is None:
                    continue
                counts[(label, name)] = n
                if rep:  # (the first run warms up)
                    times.setdefault((label, name), []).append(ms)

    lines = [
        SECTION,
        "",
        f"Run {time.strftime('%Y-%m-%d')} on {os.uname().nodename} ({os.cpu_count()} cores), commit {git_state()}: "
        f"`python benchmarks/bench_substring.py --rows {n_rows}`, `SELECT id, title FROM docs WHERE <predicate>`, "
        f"median of {repeats} interleaved runs, ms. pylance {lance.__version__}, SQLite {sqlite3.sqlite_version}, "
        f"DataFusion {datafusion.__version__}. Ratios: ours / peer, lower is better.",
        "",
        "| predicate | rows | ours | index off | ours / index off | DataFusion scan | ours / scan | Lance NGRAM "
        "| ours / Lance |"
        + (" SQLite FTS5 trigram | ours / SQLite |" if con is not None else ""),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: |" if con is not None else ""),
    ]
    selective: dict[str, list[float]] = {}
    for label, *_ in cases:
        ours = statistics.median(times[(label, "ours")])
        scan = statistics.median(times[(label, "DataFusion scan")])
        n = counts[(label, "DataFusion scan")]
        for name in systems:
            if counts.get((label, name)) not in (None, n):
                raise AssertionError(f"{name} found {counts[(label, name)]} rows for {label}, the scan {n}")
        off = statistics.median(times[(label, "ours, index off")])
        row = (f"| `{label}` | {n:,} ({n / n_rows:.3%}) | {ours:.1f} | {off:.1f} | {ours / off:.3f} | {scan:.1f} "
               f"| {ours / scan:.3f} |")
        for peer in ["Lance NGRAM"] + (["SQLite FTS5 trigram"] if con is not None else []):
            if (label, peer) in times:
                other = statistics.median(times[(label, peer)])
                row += f" {other:.1f} | {ours / other:.2f} |"
            else:
                row += " - | - |"
        lines.append(row)
        if n <= n_rows // 1000:
            for name in systems:
                if name != "ours" and (label, name) in times:
                    selective.setdefault(name, []).append(ours / statistics.median(times[(label, name)]))
    lines += ["", "Patterns matching at most 0.1 % of the rows, ours / peer: " + "; ".join(
        f"{name} {min(r):.3f}-{max(r):.3f}" for name, r in selective.items()) + "."]
    lines += ["", "Index build and size on disk (the index alone: the table's data not counted):", "",
              "| system | build s | index size |", "| --- | ---: | ---: |"]
    for name, (seconds, size) in builds.items():
        lines.append(f"| {name} | {seconds:.1f} | {size / 1e6:,.0f} MB |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines += ["", f"Peak memory of the process (every system in one): {peak:,.0f} MB."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-sqlite", action="store_true", help="leave SQLite FTS5 out (its build takes minutes)")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=HERE.parent / "bench-data") as tmp:
        report = run(args.rows, args.repeats, not args.no_sqlite, Path(tmp))
    print(report)
    if not args.no_docs:
        bench_core.write_docs_section(SECTION, report)


if __name__ == "__main__":
    main()
