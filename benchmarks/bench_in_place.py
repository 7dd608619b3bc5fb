"""Tables indexed in place vs managed tables (issue 18), in one run.

The seeded corpus of ``benchmarks/corpus.py`` (``id, title, body``) is written as a
directory of Parquet files in two layouts a user might have:

- ``plain``: ``pyarrow.parquet.write_table`` defaults (one row group per file, no page
  index, Snappy): fetching a row decodes its whole row group;
- ``paged``: row groups of 64k rows, a page index and small pages (ZSTD), as a writer
  laid out for random access does;
- ``csv``: the same rows as CSV files (``pyarrow.csv.write_csv``).

Each system runs in a fresh process (its peak RSS its own):

- ``managed``: ``db.create_table`` from the directory, then ``create_index('body')``;
- ``in_place_plain`` / ``in_place_paged``: ``CREATE FULLTEXT INDEX ON docs (body)`` on the
  directory registered with ``ctx.register_parquet``;
- ``in_place_stored``: the plain files, ``... WITH (store = 'id, title')`` (the database
  keeps a copy of the columns the queries return);
- ``in_place_csv``: the CSV files registered with ``ctx.register_csv``, with the same
  stored columns (a CSV file cannot be read at a row).

Measured: build wall time and peak RSS, bytes the database holds (index, data), and p50
latencies of top-10 searches through ``t.search`` (ids only, and with ``id, title``) and SQL
(``SELECT id, title, score() ... LIMIT 10``), per query class; then a new file (10,000 rows)
is added to the source and the next query timed (it finds the file and searches it as the
unindexed tail). Ratios read in place / managed (lower is better).

Usage: ``python benchmarks/bench_in_place.py [--rows 1000000] [--files 8] [--queries 20]``.
The report is printed and written to docs/benchmarks.md under its section.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core as bc  # noqa: E402  (query sets)
import common  # noqa: E402  (child processes, git state)

ROOT = HERE.parent
DATA = ROOT / "bench-data"
SECTION = "## Tables indexed in place (issue 18)"
CLASSES = ("frequent", "rare", "or2", "and2", "must_not")
SYSTEMS = ("managed", "in_place_plain", "in_place_paged", "in_place_stored", "in_place_csv")
LAYOUTS = {"in_place_paged": "paged", "in_place_csv": "csv"}  # (the others read the plain files)
NEW_FILE_ROWS = 10_000


def _source(n_rows: int, n_files: int, layout: str) -> Path:
    """The corpus as ``n_files`` Parquet (or CSV) files in ``layout`` (written once)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    import corpus

    target = DATA / f"in-place-{n_rows}-{n_files}" / layout
    done = target / "_complete"
    if done.exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    table = pa.Table.from_batches(list(corpus.generate(n_rows, bc.SEED)))
    per_file = -(-n_rows // n_files)
    for i in range(n_files):
        part = table.slice(i * per_file, per_file)
        path = target / f"part-{i:04d}.{'csv' if layout == 'csv' else 'parquet'}"
        if layout == "csv":
            pcsv.write_csv(part, path)
        elif layout == "plain":
            pq.write_table(part, path)
        else:
            pq.write_table(part, path, row_group_size=65_536, compression="zstd", write_page_index=True,
                           data_page_size=8192)
    done.touch()
    return target


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _p50(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def child(system: str, n_rows: int, n_files: int, n_queries: int, repeats: int) -> dict:
    import datafusion
    import pyarrow.csv as pcsv
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    import datafusion_fts as fts

    layout = LAYOUTS.get(system, "plain")
    source = _source(n_rows, n_files, layout)
    work = DATA / f"in-place-{n_rows}-{n_files}" / f"db-{system}"
    shutil.rmtree(work, ignore_errors=True)
    live = source
    if system != "managed":  # (files are added to a copy: the source stays as written)
        live = DATA / f"in-place-{n_rows}-{n_files}" / f"live-{system}"
        shutil.rmtree(live, ignore_errors=True)
        shutil.copytree(source, live)
    ctx = datafusion.SessionContext()
    start = time.perf_counter()
    if system == "managed":
        db = fts.connect(work, ctx=ctx)
        t = db.create_table("docs", ds.dataset(str(source), format="parquet").scanner().to_reader())
        t.create_index("body")
    else:
        if layout == "csv":
            ctx.register_csv("docs", str(live))
        else:
            ctx.register_parquet("docs", str(live))
        db = fts.connect(work, ctx=ctx)
        store = " WITH (store = 'id, title')" if system in ("in_place_stored", "in_place_csv") else ""
        db.sql(f"CREATE FULLTEXT INDEX ON docs (body){store}")
        t = db.table("docs")
    build_s = time.perf_counter() - start
    hwm = common.proc_status_kb()["VmHWM"]
    result = {
        "system": system, "build_s": build_s, "build_hwm_mb": hwm / 1024,
        "index_bytes": _dir_bytes(work / "index"), "data_bytes": _dir_bytes(work / "data"),
        "source_bytes": _dir_bytes(source), "latency_ms": {},
    }
    sets = bc._query_sets(n_queries)
    for cls in CLASSES:
        texts = [common.our_text(cls, terms) for terms in sets[cls]]
        for text in texts:  # warm-up
            t.search(text, limit=10, columns=["id", "title"])
            db.sql(f"SELECT id, title, score() FROM docs WHERE MATCH(body, '{text}') ORDER BY score() DESC LIMIT 10").to_arrow_table()
        lat = {}
        lat["ids"] = statistics.median(
            _p50(lambda q=q: t.search(q, limit=10, columns=[]), repeats) for q in texts)
        lat["rows"] = statistics.median(
            _p50(lambda q=q: t.search(q, limit=10, columns=["id", "title"]), repeats) for q in texts)
        lat["sql_rows"] = statistics.median(
            _p50(lambda q=q: db.sql(
                f"SELECT id, title, score() FROM docs WHERE MATCH(body, '{q}') ORDER BY score() DESC LIMIT 10"
            ).to_arrow_table(), repeats) for q in texts)
        result["latency_ms"][cls] = lat
    if system != "managed":
        table = pq.read_table(_source(n_rows, n_files, "plain") / "part-0000.parquet").slice(0, NEW_FILE_ROWS)
        if layout == "csv":
            pcsv.write_csv(table, live / "part-9999.csv")
        else:
            pq.write_table(table, live / "part-9999.parquet")
        text = common.our_text("frequent", sets["frequent"][0])
        sql = f"SELECT id, title, score() FROM docs WHERE MATCH(body, '{text}') ORDER BY score() DESC LIMIT 10"
        start = time.perf_counter()
        found = db.sql(sql).to_arrow_table()
        result["new_file_first_query_ms"] = (time.perf_counter() - start) * 1e3
        result["new_file_next_query_ms"] = _p50(lambda: db.sql(sql).to_arrow_table(), repeats)
        result["rows_after_new_file"] = t.count_rows()
        assert found.num_rows == 10 and t.count_rows() == n_rows + NEW_FILE_ROWS
        start = time.perf_counter()
        t.optimize()
        result["optimize_new_file_s"] = time.perf_counter() - start
        shutil.rmtree(live, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return result


def report(results: dict[str, dict], args: argparse.Namespace) -> str:
    managed = results["managed"]
    lines = [
        SECTION, "",
        f"{args.rows:,} rows of the synthetic corpus in {args.files} Parquet files; top-10 p50 over "
        f"{args.queries} queries per class x {args.repeats} repeats; {results['meta']['git']}; "
        f"{results['meta']['time']}. Ratios: in place / managed, lower is better.",
        "",
        "| measure | managed | in place (plain files) | ratio | in place (paged files) | ratio "
        "| in place, plain, stored id, title | ratio | in place, CSV, stored id, title | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def row(label: str, key, fmt: str = "{:.2f}") -> None:
        base = key(managed)
        cells = []
        for system in SYSTEMS[1:]:
            value = key(results[system])
            cells += [fmt.format(value), f"{value / base:.2f}" if base else "-"]
        lines.append(f"| {label} | {fmt.format(base)} | " + " | ".join(cells) + " |")

    def spread(system: str, kinds: tuple[str, ...]) -> str:
        ratios = [results[system]["latency_ms"][c][k] / managed["latency_ms"][c][k] for c in CLASSES for k in kinds]
        return f"{min(ratios):.2f}-{max(ratios):.2f}x"

    builds = [results[s]["build_s"] / managed["build_s"] for s in SYSTEMS[1:]]
    lines[4:4] = [
        f"- Index build {min(builds):.2f}-{max(builds):.2f}x a managed table's time, the index "
        f"{results['in_place_plain']['index_bytes'] / managed['index_bytes']:.2f}x its size; no data copied "
        f"(stored `id, title`: {results['in_place_stored']['data_bytes'] / 1e6:.1f} MB).",
        f"- Top-10 rows (`id, title`): with stored columns {spread('in_place_stored', ('rows',))} a managed "
        f"table's (SQL {spread('in_place_stored', ('sql_rows',))}); from the files, plain "
        f"{spread('in_place_plain', ('rows', 'sql_rows'))}, paged {spread('in_place_paged', ('rows', 'sql_rows'))}.",
        f"- Ids only: {spread('in_place_plain', ('ids',))} (each query lists the source: a `stat` per file).",
        f"- CSV files ({results['in_place_csv']['source_bytes'] / 1e6:.0f} MB), stored `id, title`: build "
        f"{results['in_place_csv']['build_s'] / managed['build_s']:.2f}x, index "
        f"{results['in_place_csv']['index_bytes'] / managed['index_bytes']:.2f}x, top-10 rows "
        f"{spread('in_place_csv', ('rows',))} (SQL {spread('in_place_csv', ('sql_rows',))}), ids only "
        f"{spread('in_place_csv', ('ids',))}.",
        "",
    ]
    row("index build, s", lambda r: r["build_s"])
    row("build peak RSS, MB", lambda r: r["build_hwm_mb"], "{:.0f}")
    row("index on disk, MB", lambda r: r["index_bytes"] / 1e6, "{:.1f}")
    row("data copied into the database, MB", lambda r: r["data_bytes"] / 1e6, "{:.1f}")
    for cls in CLASSES:
        for kind, label in (("ids", "ids only"), ("rows", "id, title"), ("sql_rows", "SQL id, title")):
            row(f"{cls}: {label}, ms", lambda r, c=cls, k=kind: r["latency_ms"][c][k])
    lines += ["", "| after adding a file of 10,000 rows | plain files | paged files | plain, stored | CSV, stored |",
              "|---|---|---|---|---|"]
    for key, label in (("new_file_first_query_ms", "first SQL query, ms"),
                       ("new_file_next_query_ms", "next SQL queries (p50), ms"),
                       ("optimize_new_file_s", "OPTIMIZE (indexes the file), s")):
        lines.append(f"| {label} | " + " | ".join(f"{results[s][key]:.2f}" for s in SYSTEMS[1:]) + " |")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", choices=SYSTEMS)
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--from-json", type=Path, help="rewrite the section from a saved run")
    args = parser.parse_args()
    if args.from_json:
        bc.write_docs_section(SECTION, report(json.loads(args.from_json.read_text()), args))
        return
    if args.child:
        common.emit_result(child(args.child, args.rows, args.files, args.queries, args.repeats))
        return
    for layout in ("plain", "paged", "csv"):
        _source(args.rows, args.files, layout)
    argv = ["--rows", str(args.rows), "--files", str(args.files), "--queries", str(args.queries),
            "--repeats", str(args.repeats)]
    meta = {"git": common.git_state(), "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    results = {"meta": meta, **{s: common.run_child(__file__, [*argv, "--child", s], print) for s in SYSTEMS}}
    (DATA / f"in-place-{args.rows}.json").write_text(json.dumps(results, indent=1))
    text = report(results, args)
    print(text)
    if not args.no_docs:
        bc.write_docs_section(SECTION, text)


if __name__ == "__main__":
    main()
