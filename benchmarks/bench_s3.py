"""Object storage (issue 32): the user's Parquet files on an S3-protocol server, indexed in
place and searched, against the same files on local disk and against Lance on the same
server, in one run.

The server is moto's (tests/s3_server.py), on loopback: a real HTTP server, slower per
request than S3 in its own region is per byte, faster per round trip (~1-3 ms here against
~10-30 ms). Its access log counts the requests each system makes.

The seeded corpus (``benchmarks/corpus.py``: ``id, title, body``) is written once as
``--files`` Parquet files with a page index and small pages (bench_in_place's ``paged``
layout), uploaded to the bucket and kept on disk. Each system runs in fresh processes:

- ``ours_local``: ``db.index_in_place('docs', <directory>)`` then ``create_index('body')``;
- ``ours_s3``: the same on ``s3://bench/corpus/`` (``connect(..., storage_options=)``), its
  index in a local directory;
- ``ours_db_s3``: ``ours_s3``'s database directory copied to ``s3://bench/db`` and opened
  by its URL (read only): everything on the store;
- ``lance_s3``: the files read from the bucket (pyarrow's S3 filesystem), written by
  ``lance.write_dataset`` to ``s3://bench/lance`` in as many files as ours (moto reads a
  whole object to serve a range of it: one 1M-row file made every read of Lance's cost
  ~0.25 s) and indexed there (``INVERTED``).

Measured: build time and peak RSS; a fresh process's import + open + first top-10 query
(*cold*) and the requests it made; top-10 rows (``id, title`` and the score: our SQL,
Lance's ``to_table(full_text_query=..., columns=[...])``) p50 per query class after a
warm-up pass (*warm*) and the requests per warm query. Ratios: ours on S3 / ours local
and ours on S3 / Lance on S3, lower is better.

Usage: ``python benchmarks/bench_s3.py [--rows 1000000] [--files 8] [--queries 10]``; the
report is printed and replaces its section of docs/benchmarks.md (``--no-docs``: not).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import bench_core as bc  # noqa: E402  (query sets)
import common  # noqa: E402  (child processes, git state)

DATA = HERE.parent / "bench-data"
SECTION = "## Object storage (issue 32)"
CLASSES = ("frequent", "rare", "or2", "and2", "must_not")
SYSTEMS = ("ours_local", "ours_s3", "ours_db_s3", "lance_s3")
BUCKET = "bench"
# The "warm, listing at every query" runs set fts.remote_source_refresh_seconds to 0 (the
# default, 1 s, reuses a remote source's listing for the queries of the next second).
# The writes phase: rows loaded and indexed, then inserts of one row each.
WRITE_ROWS = 100_000
INSERTS = 20
SQL = "SELECT id, title, score() AS s FROM docs WHERE MATCH(body, '{q}') ORDER BY s DESC LIMIT 10"


def _requests(log: str) -> int:
    """Requests moto's access log holds so far (a line each)."""
    with open(log, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if '" 2' in line or '" 3' in line or '" 4' in line)


def _bytes(log: str) -> int:
    """Bytes of response bodies the server sent so far (tests/s3_server.py counts them)."""
    try:
        with open(log + ".bytes", encoding="utf-8") as f:
            return sum(int(line) for line in f if line.strip())
    except FileNotFoundError:
        return 0


def _in_bucket(endpoint: str, key: str) -> bool:
    from s3_server import S3Server

    found = S3Server(endpoint).client().list_objects_v2(Bucket=BUCKET, Prefix=key)
    return bool(found.get("KeyCount"))


def _options(endpoint: str) -> dict[str, str]:
    from s3_server import S3Server

    return S3Server(endpoint).options()


class _Ours:
    def __init__(self, system: str, work: Path, source: str, endpoint: str, list_every_query: bool = False) -> None:
        import datafusion_fts as fts

        config = {"fts.remote_source_refresh_seconds": 0} if list_every_query else None
        self.system, self.work, self.endpoint = system, work, endpoint
        options = _options(endpoint) if system != "ours_local" else None
        where = f"s3://{BUCKET}/db" if system == "ours_db_s3" else work
        if system == "ours_db_s3" and not _in_bucket(endpoint, "db/manifest.json"):
            where = None  # (built by copying: see build)
        self.db = fts.connect(where, storage_options=options, config=config) if where is not None else None
        self.source = source

    def build(self) -> None:
        if self.system != "ours_db_s3":
            self.db.index_in_place("docs", self.source).create_index("body")
            return
        # ours_s3's database directory (its index of the bucket's files) copied to the
        # bucket as it is: the whole database then lives on the store.
        from s3_server import S3Server

        S3Server(self.endpoint).upload_directory(self.work.parent / "db-ours_s3", BUCKET, "db")

    def top(self, cls: str, terms: tuple[str, ...]) -> list:
        text = common.our_text(cls, terms)
        return self.db.sql(SQL.format(q=text)).to_arrow_table().column("id").to_pylist()


class _Lance:
    def __init__(self, system: str, work: Path, source: str, endpoint: str, rows_per_file: int) -> None:
        # (files of as many rows as ours: moto reads a whole object to serve a range of it,
        # so one 1M-row file made each of Lance's reads cost ~0.25 s)
        self.rows_per_file = rows_per_file
        self.options = _options(endpoint)
        self.uri = f"s3://{BUCKET}/lance"
        self.source, self.endpoint = source, endpoint
        self.ds = None

    def build(self) -> None:
        import bench_peers as bp
        import lance
        import pyarrow.dataset as pds
        import pyarrow.fs as pfs

        fs = pfs.S3FileSystem(access_key=self.options["access_key_id"], secret_key=self.options["secret_access_key"],
                              region=self.options["region"], endpoint_override=self.endpoint, scheme="http")
        files = pds.dataset(self.source.removeprefix("s3://"), filesystem=fs, format="parquet")
        ds = lance.write_dataset(files.scanner(batch_size=65_536).to_reader(), self.uri, mode="overwrite",
                                 storage_options=self.options, max_rows_per_file=self.rows_per_file)
        ds.create_scalar_index(bp.FIELD, index_type="INVERTED", **bp.LANCE_OPTS)

    def top(self, cls: str, terms: tuple[str, ...]) -> list:
        import bench_peers as bp
        import lance

        if self.ds is None:
            self.ds = lance.dataset(self.uri, storage_options=self.options)
        query = bp.Lance.query(self, cls, terms)
        return self.ds.to_table(full_text_query=query, limit=10, columns=["id", "title", "_score"]).column(
            "id").to_pylist()


def child(phase: str, system: str, n_rows: int, n_files: int, endpoint: str, log: str, n_queries: int,
          repeats: int) -> dict:
    """(A fresh process.) ``build``, ``cold`` (import + open + first query), ``warm``,
    ``listing`` (warm, ours listing the source at every query) or
    ``writes``."""
    start = time.perf_counter()
    import bench_in_place as bip

    if phase == "writes":
        return _writes(system, n_rows, n_files, endpoint, log)

    work = DATA / f"s3-{n_rows}-{n_files}" / f"db-{system}"
    source = (str(bip._source(n_rows, n_files, "paged")) if system == "ours_local"
              else f"s3://{BUCKET}/corpus/")
    if system.startswith("ours"):
        runner = _Ours(system, work, source, endpoint, list_every_query=phase == "listing")
    else:
        runner = _Lance(system, work, source, endpoint, -(-n_rows // n_files))
    sets = bc._query_sets(n_queries)
    if phase == "build":
        runner.build()
        return {"build_s": time.perf_counter() - start, "build_hwm_mb": common.proc_status_kb()["VmHWM"] / 1024}
    if phase in ("cold", "cold_again"):
        ids = runner.top("frequent", sets["frequent"][0])
        return {f"{phase}_s": time.perf_counter() - start,
                f"{phase}_hwm_mb": common.proc_status_kb()["VmHWM"] / 1024, "first_ids": ids}
    for cls in CLASSES:  # (a warm-up pass)
        for terms in sets[cls]:
            runner.top(cls, terms)
    before, before_bytes = _requests(log), _bytes(log)
    latency, tops = {}, {}
    for cls in CLASSES:
        per_query = []
        for terms in sets[cls]:
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                ids = runner.top(cls, terms)
                times.append(time.perf_counter() - t0)
            per_query.append(statistics.median(times))
            tops.setdefault(cls, ids)
        latency[cls] = statistics.median(per_query) * 1e3
    queries = len(CLASSES) * n_queries * repeats
    return {f"{phase}_ms": latency, f"{phase}_requests_per_query": (_requests(log) - before) / queries,
            f"{phase}_kb_per_query": (_bytes(log) - before_bytes) / queries / 1e3,
            f"{phase}_hwm_mb": common.proc_status_kb()["VmHWM"] / 1024, f"{phase}_tops": tops}


def _writes(system: str, n_rows: int, n_files: int, endpoint: str, log: str) -> dict:
    """A managed table written where the system keeps it: ``WRITE_ROWS`` rows of the
    corpus loaded and indexed, then ``INSERTS`` inserts of one row each (acknowledged:
    ours durable on the store, a commit each there; Lance's an append, a commit), with
    the requests each made (its FTS index covers the appended rows after an optimize)."""
    import bench_in_place as bip
    import pyarrow.parquet as pq

    first = sorted(bip._source(n_rows, n_files, "paged").glob("*.parquet"))[0]
    table = pq.read_table(first).slice(0, WRITE_ROWS)
    row = table.slice(0, 1)
    if system == "lance_s3":
        import bench_peers as bp
        import lance

        options, uri = _options(endpoint), f"s3://{BUCKET}/lance-writes"
        start = time.perf_counter()
        ds = lance.write_dataset(table, uri, mode="overwrite", storage_options=options)
        ds.create_scalar_index(bp.FIELD, index_type="INVERTED", **bp.LANCE_OPTS)
        load_s = time.perf_counter() - start

        def insert() -> None:
            lance.write_dataset(row, uri, mode="append", storage_options=options)
    else:
        import datafusion_fts as fts

        where = f"s3://{BUCKET}/writes" if system == "ours_db_s3" else DATA / f"s3-{n_rows}-{n_files}" / "writes"
        if system == "ours_local":
            shutil.rmtree(where, ignore_errors=True)  # (the bucket is new every run)
        db = fts.connect(where, storage_options=_options(endpoint) if system == "ours_db_s3" else None)
        start = time.perf_counter()
        t = db.create_table("docs", table)
        t.create_index("body")
        load_s = time.perf_counter() - start

        def insert() -> None:
            t.insert(row)
    before, times = _requests(log), []
    for _ in range(INSERTS):
        t0 = time.perf_counter()
        insert()
        times.append(time.perf_counter() - t0)
    return {"load_s": load_s, "insert_ms": statistics.median(times) * 1e3,
            "insert_requests": (_requests(log) - before) / INSERTS}


def _upload(s3, n_rows: int, n_files: int) -> int:
    """The corpus's files into the bucket (once per server); their bytes."""
    import bench_in_place as bip

    source = bip._source(n_rows, n_files, "paged")
    client = s3.client()
    client.create_bucket(Bucket=BUCKET)
    total = 0
    for path in sorted(source.glob("*.parquet")):
        client.upload_file(str(path), BUCKET, f"corpus/{path.name}")
        total += path.stat().st_size
    return total


def report(results: dict, args: argparse.Namespace) -> str:
    local, s3, db_s3, lance = (results[s] for s in SYSTEMS)

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}" if b else "-"

    lines = [
        SECTION, "",
        f"{args.rows:,} rows of the synthetic corpus in {args.files} Parquet files "
        f"({results['meta']['source_mb']:.0f} MB, page index, small pages) on moto's S3 server on loopback and on "
        f"local disk; top-10 rows (`id, title`, score) p50 over {args.queries} queries per class x {args.repeats} "
        f"repeats after a warm-up pass; cold = a fresh process's import + open + first query. "
        f"{results['meta']['git']}; {results['meta']['time']}; `python benchmarks/bench_s3.py --rows {args.rows}`. "
        "Ratios: lower is better.", "",
        "| measure | ours, local files | ours, files on S3 (index local) | ours, all on S3 | Lance on S3 "
        "| files on S3 / local | all on S3 / Lance |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def row(label: str, key, fmt: str = "{:.2f}") -> None:
        a, b, c, d = (key(r) for r in (local, s3, db_s3, lance))
        lines.append(f"| {label} | {fmt.format(a)} | {fmt.format(b)} | {fmt.format(c)} | {fmt.format(d)} | "
                     f"{ratio(b, a)} | {ratio(c, d)} |")

    row("build (s)", lambda r: r["build_s"], "{:.1f}")
    row("build peak RSS (MB)", lambda r: r["build_hwm_mb"], "{:.0f}")
    row("cold: import + open + first query (s)", lambda r: r["cold_s"])
    row("cold: requests to the store", lambda r: r["cold_requests"], "{:.0f}")
    row("cold: MB read from the store", lambda r: r.get("cold_mb", 0.0), "{:.2f}")
    if "cold_again_s" in db_s3:  # (the database on S3 only: its segments kept on local disk by then)
        for label, key, fmt in (("open + first query (s)", "cold_again_s", "{:.2f}"),
                                ("requests to the store", "cold_again_requests", "{:.0f}"),
                                ("MB read from the store", "cold_again_mb", "{:.2f}")):
            lines.append(f"| cold again, a new process, segments kept on disk: {label} | - | - | "
                         f"{fmt.format(db_s3[key])} | - | - | - |")
    for cls in CLASSES:
        row(f"warm top-10 rows p50, {cls} (ms)", lambda r, c=cls: r["warm_ms"][c])
    row("warm: requests per query", lambda r: r["warm_requests_per_query"], "{:.1f}")
    row("warm: KB read per query", lambda r: r.get("warm_kb_per_query", 0.0), "{:.1f}")
    for cls in CLASSES:
        row(f"warm, listing at every query: p50, {cls} (ms)", lambda r, c=cls: r.get("listing_ms", r["warm_ms"])[c])
    row("warm, listing at every query: requests per query",
        lambda r: r.get("listing_requests_per_query", r["warm_requests_per_query"]), "{:.1f}")
    row("query process peak RSS (MB)", lambda r: r["warm_hwm_mb"], "{:.0f}")
    lines += ["", f"Writes: a table of {WRITE_ROWS:,} rows (the first file's) loaded and indexed where the system "
              f"keeps its tables, then {INSERTS} inserts of one row each (ours: durable when it returns, a write-ahead "
              "log record on local disk, a commit on the store: a check of the manifest, a data file, a segment "
              "(one object), the manifest; "
              "Lance: an append, a commit, its index not updated). Files indexed in place take no inserts. "
              "moto serves requests one after another (~4 ms each here).", "",
              "| measure | ours, local directory | ours, database on S3 | Lance on S3 | ours S3 / local | ours S3 / Lance |",
              "|---|---:|---:|---:|---:|---:|"]
    for label, key, fmt in ((f"load + index {WRITE_ROWS:,} rows (s)", "load_s", "{:.2f}"),
                            ("insert one row, p50 (ms)", "insert_ms", "{:.1f}"),
                            ("requests per insert", "insert_requests", "{:.1f}")):
        a, b, c = local[key], db_s3[key], lance[key]
        lines.append(f"| {label} | {fmt.format(a)} | {fmt.format(b)} | {fmt.format(c)} | {ratio(b, a)} | "
                     f"{ratio(b, c)} |")
    same = all(local["warm_tops"][c] == r[k][c] for c in CLASSES for r in (s3, db_s3) for k in ("warm_tops", "listing_tops"))
    lines += ["", f"Our three setups return the same top-10 ids for every class: {same}. Lance's BM25 differs "
              "from ours (see Peers), so its rows are not compared. *Files on S3*: the table indexed in place "
              "on the bucket, its index in a local directory. *All on S3*: that database directory copied to "
              "the bucket and opened by its URL (`fts.connect('s3://bench/db')`; its build is the copy). "
              "*Warm* is the default: a listing of the source (one LIST request) serves the queries of the next "
              "second (`fts.remote_source_refresh_seconds = 1`: a file added is found within it); *listing at every "
              "query* sets it to 0 (a file added is found by the next query). Lance answers from the dataset version it opened "
              "(its rows are shown the same in both). Pages a fetch read are kept (`fts.object_cache_bytes`), so "
              "warm queries read none again; Lance made the requests shown per warm query. Lance writes as many "
              "files as ours (moto reads a whole object to serve a range of it)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--child", nargs=5, metavar=("PHASE", "SYSTEM", "ENDPOINT", "LOG", "_"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        phase, system, endpoint, log, _ = args.child
        common.emit_result(child(phase, system, args.rows, args.files, endpoint, log, args.queries, args.repeats))
        return
    from s3_server import s3_server

    results: dict = {"meta": {"git": common.git_state(), "time": _dt.datetime.now().isoformat(timespec="minutes")}}
    with tempfile.TemporaryDirectory() as tmp:
        # (segments kept on disk go to a folder of this run: the first query of a process
        # after the build is cold, the later ones find them as a user's would)
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        log = str(Path(tmp) / "moto.log")
        with s3_server(log) as s3:
            results["meta"]["source_mb"] = _upload(s3, args.rows, args.files) / 1e6
            argv = ["--rows", str(args.rows), "--files", str(args.files), "--queries", str(args.queries),
                    "--repeats", str(args.repeats)]
            for system in SYSTEMS:
                out = results[system] = {}
                phases = ["build", "cold", "warm"] + (["listing"] if system in ("ours_s3", "ours_db_s3") else [])
                phases += ["cold_again"] if system == "ours_db_s3" else []  # (its segments on local disk now)
                for phase in phases + (["writes"] if system != "ours_s3" else []):
                    before, before_bytes = _requests(log), _bytes(log)
                    out.update(common.run_child(__file__, [*argv, "--child", phase, system, s3.endpoint, log, "-"],
                                                print))
                    out[f"{phase}_requests"] = _requests(log) - before
                    out[f"{phase}_mb"] = (_bytes(log) - before_bytes) / 1e6
    text = report(results, args)
    print(text)
    (DATA / f"s3-{args.rows}.json").write_text(json.dumps(results, indent=1))
    if not args.no_docs:
        bc.write_docs_section(SECTION, text)
        (HERE.parent / "docs" / "img" / f"s3-{args.rows}.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
