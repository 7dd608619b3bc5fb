"""Searches without a limit (issue 17): every matching row with its text, time and memory.

``SELECT _rowid, body FROM docs WHERE MATCH(body, 'w') ORDER BY score() DESC`` with a
frequent term ``w`` returns about a tenth of the 1M-row benchmark corpus. Each way of
asking runs in a fresh process (after a tiny search of the same shape, so kernels are
loaded and the baseline includes the libraries), and reports its time and its peak RSS
growth over that baseline, beside the result's own size:

* ``ours_sql``: the statement above, ``.to_arrow_table()``;
* ``ours_api``: ``t.search(w, limit=None, columns=["body"])``;
* ``ours_stream``: ``t.search_stream(w, columns=["body"])``, each batch read and dropped;
* ``lance``: ``ds.to_table(full_text_query=MatchQuery(w, "body"), columns=["body", "_score"], with_row_id=True)``;
* ``*_ids``: the same without ``body`` (the issue's time target: <= 5x this; memory
  target: growth <= 2x the result's size).

Usage::

    python benchmarks/bench_unbounded.py --rows 1000000    # needs bench-data/ from bench_peers.py

The markdown report is printed and written to ``docs/benchmarks.md`` under
``## Searches without a limit (issue 17)``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core as bc  # noqa: E402  (paths, query sets, machine, docs writer)
import common  # noqa: E402  (child processes, /proc status, git state, load)

SECTION = "## Searches without a limit (issue 17)"
MODES = ("ours_sql", "ours_sql_ids", "ours_api", "ours_stream", "lance", "lance_ids")
FIELD = bc.FIELD
WARM_UP = "bbb"  # (a rare term of the corpus: loads the kernels and the fetch path)


def _ours(mode: str, path: Path) -> Callable[[str], object]:
    """One of our modes as ``query(term)``, the database opened."""
    import datafusion_fts as fts

    db = fts.connect(path)
    t = db.table("docs")
    cols = "_rowid" if mode == "ours_sql_ids" else f"_rowid, {FIELD}"

    def query(w: str) -> object:
        if mode.startswith("ours_sql"):
            return db.sql(f"SELECT {cols} FROM docs WHERE MATCH({FIELD}, '{w}') ORDER BY score() DESC").to_arrow_table()
        if mode == "ours_api":
            return t.search(w, limit=None, columns=[FIELD])
        rows = size = 0
        for batch in t.search_stream(w, columns=[FIELD]):  # (each batch dropped once counted)
            rows, size = rows + batch.num_rows, size + batch.nbytes
        return rows, size

    return query


def _lance(mode: str, path: Path) -> Callable[[str], object]:
    """A Lance mode as ``query(term)``, the dataset opened."""
    import lance
    from lance.query import MatchQuery

    ds = lance.dataset(str(path))

    def query(w: str) -> object:
        if mode == "lance_ids":
            return ds.to_table(full_text_query=MatchQuery(w, FIELD), columns=["_score"], with_row_id=True,
                               disable_scoring_autoprojection=True)
        return ds.to_table(full_text_query=MatchQuery(w, FIELD), columns=[FIELD, "_score"], with_row_id=True)

    return query


def _child(mode: str, n_rows: int, term: str) -> dict:
    """One mode in this (fresh) process: its time, rows, result size and peak RSS growth
    over the process after a search of the same shape that matches a few rows."""
    ours = mode.startswith("ours")
    query = _ours(mode, bc._paths(n_rows)["ours"]) if ours else _lance(mode, bc.DATA / f"lance-{n_rows}")
    query(WARM_UP)
    warm = common.proc_status_kb()["VmRSS"]
    t0 = time.perf_counter()
    result = query(term)
    seconds = time.perf_counter() - t0
    peak = common.proc_status_kb()["VmHWM"]
    rows, size = result if isinstance(result, tuple) else (result.num_rows, result.nbytes)
    return {"mode": mode, "term": term, "s": seconds, "rows": rows, "result_mb": size / 2**20,
            "growth_mb": max(peak - warm, 0) / 1024}


def _report(n_rows: int, terms: list[str], results: dict[tuple[str, str], list[dict]], note: str) -> str:
    def med(mode: str, term: str, key: str) -> float:
        return statistics.median(r[key] for r in results[mode, term])

    lines = [SECTION, "",
             f"_{n_rows:,} rows; {note}. Each cell: the median of fresh processes; growth = peak RSS "
             "minus RSS after a search of the same shape matching a few rows._", ""]
    for term in terms:
        lines += [f"Term `{term}`:", "",
                  "| mode | rows | result MB | time s | growth MB | growth / result | time / its ids-only | "
                  "ours / lance, time | ours / lance, growth |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for mode in MODES:
            if (mode, term) not in results:
                continue
            s, g, size = med(mode, term, "s"), med(mode, term, "growth_mb"), med(mode, term, "result_mb")
            ids = "ours_sql_ids" if mode.startswith("ours") else "lance_ids"
            vs_ids = f"{s / med(ids, term, 's'):.1f}x" if not mode.endswith("_ids") and (ids, term) in results else ""
            peer = "lance_ids" if mode.endswith("_ids") else "lance"
            vs_t = vs_g = ""
            if mode.startswith("ours") and (peer, term) in results:
                vs_t = f"{s / med(peer, term, 's'):.2f}"
                vs_g = f"{g / max(med(peer, term, 'growth_mb'), 0.1):.2f}"
            rows = results[mode, term][0]["rows"]
            lines.append(f"| {mode} | {rows:,} | {size:.1f} | {s:.3f} | {g:.1f} | {g / max(size, 0.1):.2f} | "
                         f"{vs_ids} | {vs_t} | {vs_g} |")
        lines.append("")
    lines += [
        "Returning the text is the cost here, not finding the rows: every data page holding a matching row is "
        "read, CRC-checked and ZSTD-decompressed (pages of ~4 KiB, so that a top-k fetch reads little), and "
        "the values are copied into score order. Ours fetches in bounded memory (`storage/parquet/large_take.py`: "
        "slices of the score order, or two passes when rows crowd their pages), on one thread; "
        "`ours_stream` holds one batch of 8,192 rows at a time and reads a page once per batch it has rows "
        "of. The issue's time target (<= 5x the ids-only query) would leave ~0.05 s for decompressing "
        "tens of thousands of pages.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=bc._parse_rows, default=1_000_000)
    parser.add_argument("--terms", default="fr", help="comma-separated frequent terms (default: fr)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per mode and term")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--term", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        common.emit_result(_child(args.child, args.rows, args.term))
        return
    terms = [w.strip() for w in args.terms.split(",") if w.strip()]
    results: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.repeats):  # (interleaved, so drift on the machine hits every mode alike)
        for term in terms:
            for mode in args.modes.split(","):
                child = ["--child", mode, "--term", term, "--rows", str(args.rows)]
                results.setdefault((mode, term), []).append(common.run_child(__file__, child, bc._log))
    note = (f"{_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {common.git_state()}, "
            f"load {common.loadavg()}")
    report = _report(args.rows, terms, results, note)
    print(report)
    if not args.no_docs:
        bc.write_docs_section(SECTION, report)


if __name__ == "__main__":
    main()
