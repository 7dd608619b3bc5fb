"""Peers benchmark (issue 7): datafusion-fts against Tantivy, SQLite FTS5, bm25s, Lance and
DuckDB's fts extension, on the same corpus and machine, in one run.

Every system indexes the ``body`` column of the seeded Zipf corpus (``benchmarks/corpus.py``),
or with ``--corpus stdlib`` of a real English text (the docstrings of this Python's standard
library), with its analyzer set as close to ours as it allows (split on non-alphanumerics,
lowercase, no stemming, no stop words), then answers bench_core's query classes through its
most natural API. On real text the query terms' bands come from the corpus's own document
frequencies, and the analyzers' remaining differences show in the sanity checks.

* **Build**: each system is built in a fresh subprocess, so its peak RSS (``VmHWM``, read in
  the child) is its own: docs/s, CPU seconds, peak RSS and the size on disk.
* **Query memory**: each system is opened again in a fresh subprocess that runs every query
  once; peak RSS after imports, after opening and over the queries.
* **Latency**: all systems are opened in this process; one warm-up pass over every query,
  then ``--repeats`` timed passes. Within a pass every query is run by every system back to
  back, the order of the systems rotated from query to query and pass to pass, so none
  always runs after the same neighbour. p50/p95 per class, k and system.
* **Sanity**: match counts where a system reports them, and top-10 overlap and the top-1
  score ratio against ours (the BM25 variants differ; the report says how).

A class a system cannot express is marked n/a with the reason; a system whose package or
extension cannot be loaded is reported as not installable, with the error.

Usage::

    python benchmarks/bench_peers.py --rows 100000           # quick run
    python benchmarks/bench_peers.py                         # 1,000,000 rows
    python benchmarks/bench_peers.py --skip-build            # reuse bench-data/ builds
    python benchmarks/bench_peers.py --corpus stdlib         # real text (every docstring)
    python benchmarks/plot_peers.py docs/img/peers.json      # redraw the plots only

Results go to ``bench-data/peers-<n>.json`` (``peers-stdlib-<n>.json``). Unless ``--no-docs``,
the markdown report replaces the ``## Peers (issue 7)`` section of ``docs/benchmarks.md`` (the
real-text one its own section, ``SECTIONS``), and the JSON and the PNG plots go to
``docs/img/`` (``peers.json``, ``peers-*.png``; real text ``peers-stdlib.json``,
``peers-stdlib-*.png``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import shutil
import sqlite3
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core as bc  # noqa: E402  (corpus query classes, builds of ours and Tantivy, helpers)
import bench_sql  # noqa: E402  (the SQLite FTS5 build and SQL texts)
import common  # noqa: E402

ROOT = HERE.parent
DATA = ROOT / "bench-data"
IMG = ROOT / "docs" / "img"
SECTIONS = {"synthetic": "## Peers (issue 7)", "stdlib": "## Real text: Python standard library docstrings"}
FIELD = bc.FIELD
KS = bc.KS
CLASSES = tuple(bc.CLASS_DOC)
K1, B = 1.2, 0.75
BUILDS = ("ours", "tantivy", "sqlite", "bm25s", "lance", "duckdb")
SEARCHERS = ("ours", "ours_sql", "tantivy", "sqlite", "bm25s", "lance", "duckdb",
             "ours_rows", "ours_sql_rows", "lance_rows")
LABEL = {"ours": "datafusion-fts", "ours_sql": "datafusion-fts SQL", "tantivy": "Tantivy",
         "sqlite": "SQLite FTS5", "bm25s": "bm25s", "lance": "Lance", "duckdb": "DuckDB fts",
         "ours_rows": "datafusion-fts rows", "ours_sql_rows": "datafusion-fts SQL rows", "lance_rows": "Lance rows"}
# Searchers that return every column of the top k (id, title, body) with their scores, and the
# opened system each shares (the same index, the same process state).
ROWS = {"ours_rows": "ours", "ours_sql_rows": "ours", "lance_rows": "lance"}
SHARES = {"ours_sql": "ours", **ROWS}
ROW_COLUMNS = ("id", "title", "body")
COUNT_CHECKS_PER_CLASS = 5
BUSY_CORES = 0.25  # other processes' CPU (in cores) above which the report warns that timings are inflated
AGREEMENT_PER_CLASS = 5
DUCKDB_MEMORY_LIMIT = "3GB"  # DuckDB's default is 80 % of RAM; keeps the process under ~4 GiB
LANCE_OPTS = {"with_position": False, "base_tokenizer": "simple", "lower_case": True, "stem": False,
              "remove_stop_words": False, "ascii_folding": False, "max_token_length": 40}
NO_BOOLEAN = "bm25s scores a bag of query tokens (a sum, i.e. OR); it has no required or excluded terms"


class NotSupported(Exception):
    """A query class the system cannot express (reported as n/a with this reason)."""


def _log(msg: str) -> None:
    print(f"[bench_peers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _paths(n_rows: int, corpus_name: str = "synthetic") -> dict[str, Path]:
    core, sql = bc._paths(n_rows, corpus_name), bench_sql._paths(n_rows, corpus_name)
    key = bc.stem(n_rows, corpus_name)
    return {
        "parquet": core["parquet"],
        "terms": core["terms"],
        "ours": core["ours"],
        "tantivy": core["tantivy"],
        "sqlite": sql["sqlite"],
        "bm25s": DATA / f"bm25s-{key}",
        "lance": DATA / f"lance-{key}",
        "duckdb": DATA / f"duckdb-{key}.db",
        "json": DATA / f"peers-{key}.json",
    }


def _mb(kb: int) -> float:
    return kb / 1024.0


def _size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return bc._dir_mb(path) if path.exists() else 0.0


# -- DuckDB's fts extension ---------------------------------------------------------------------
def _duckdb_connect(path: str, read_only: bool = False):
    """A DuckDB connection with the fts extension loaded from the ``duckdb-ext-fts`` wheel.

    DuckDB installs extensions by downloading them at ``INSTALL`` time, which this sandbox
    cannot do; the wheel ships the same signed extension binary for one DuckDB version, so
    pointing ``extension_directory`` at it lets ``LOAD fts`` work with signature checks on."""
    import duckdb

    con = duckdb.connect(path, read_only=read_only)
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    try:
        import duckdb_ext  # namespace package laid out by duckdb-ext-fts
    except ImportError:
        pass
    else:
        con.execute("SET extension_directory = ?", (str(Path(next(iter(duckdb_ext.__path__))) / "extensions"),))
    con.execute("LOAD fts")
    con.execute(f"SET memory_limit = '{DUCKDB_MEMORY_LIMIT}'")
    return con


def _probe(system: str) -> str | None:
    """None if the system can run here, else the exact error that stops it."""
    try:
        system = SHARES.get(system, system)
        if system == "ours":
            import datafusion_fts.database  # noqa: F401 - the package itself imports lazily
        elif system == "bm25s":
            import bm25s  # noqa: F401
        elif system == "lance":
            import lance  # noqa: F401
        elif system == "tantivy":
            import tantivy  # noqa: F401
        elif system == "duckdb":
            _duckdb_connect(":memory:").close()
        elif system == "sqlite":
            con = sqlite3.connect(":memory:")
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            con.close()
    except Exception as exc:  # noqa: BLE001 - the report quotes whatever stopped it
        return f"{type(exc).__name__}: {exc}"
    return None


# -- builds of the peers this script owns (ours, Tantivy, SQLite: bench_core / bench_sql) --------
class _Phases:
    """Wall time of a build's named phases, plus its CPU seconds and peak RSS (from creation on)."""

    def __init__(self) -> None:
        self.rss_base = bc._peak_rss_mb()  # after the imports
        self.cpu0 = bc._cpu_s()
        self.t0 = self.last = time.perf_counter()
        self.times: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.times[name] = now - self.last
        self.last = now

    def result(self, target: Path, **extra) -> dict:
        return {"phases": self.times, "total_s": self.last - self.t0, "cpu_s": bc._cpu_s() - self.cpu0,
                "rss_base_mb": self.rss_base, "peak_rss_mb": bc._peak_rss_mb(), "disk_mb": _size_mb(target),
                "disk_index_mb": None} | extra


def _child_bm25s(n_rows: int, corpus_name: str = "synthetic") -> dict:
    import bm25s
    import pyarrow.parquet as pq

    p = _paths(n_rows, corpus_name)
    shutil.rmtree(p["bm25s"], ignore_errors=True)
    clock = _Phases()
    bodies = pq.read_table(p["parquet"], columns=[FIELD]).column(0).to_pylist()
    clock.lap("load")
    # bm25s's own tokenizer: regex (?u)\b\w\w+\b, lowercase; no stop words, no stemmer.
    tokens = bm25s.tokenize(bodies, lower=True, stopwords=None, show_progress=False)
    del bodies
    clock.lap("tokenize")
    retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
    retriever.index(tokens, show_progress=False)
    del tokens
    clock.lap("index")
    retriever.save(p["bm25s"], show_progress=False)
    clock.lap("save")
    assert retriever.scores["num_docs"] == n_rows, (retriever.scores["num_docs"], n_rows)
    return clock.result(p["bm25s"])


def _child_lance(n_rows: int, corpus_name: str = "synthetic") -> dict:
    import lance
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = _paths(n_rows, corpus_name)
    shutil.rmtree(p["lance"], ignore_errors=True)
    clock = _Phases()
    pf = pq.ParquetFile(p["parquet"])
    reader = pa.RecordBatchReader.from_batches(pf.schema_arrow, pf.iter_batches(batch_size=65_536))
    ds = lance.write_dataset(reader, p["lance"])
    clock.lap("load")
    ds.create_scalar_index(FIELD, index_type="INVERTED", **LANCE_OPTS)
    clock.lap("index")
    assert ds.count_rows() == n_rows, (ds.count_rows(), n_rows)
    return clock.result(p["lance"], disk_index_mb=_size_mb(p["lance"] / "_indices"),
                        fragments=len(ds.get_fragments()))


def _child_duckdb(n_rows: int, corpus_name: str = "synthetic") -> dict:
    import duckdb  # noqa: F401  (imported before the clock starts, like the other children's libraries)

    p = _paths(n_rows, corpus_name)
    for f in (p["duckdb"], p["duckdb"].with_name(p["duckdb"].name + ".wal")):
        f.unlink(missing_ok=True)
    clock = _Phases()
    con = _duckdb_connect(str(p["duckdb"]))
    parquet = str(p["parquet"]).replace("'", "''")
    con.execute(f"CREATE TABLE docs AS SELECT id, {FIELD} FROM read_parquet('{parquet}')")
    clock.lap("load")
    # The extension's tokenizer (lowercase, strip accents, split on non-letters) without
    # stemming or stop words; BM25 k=1.2, b=0.75 are its defaults.
    con.execute(f"PRAGMA create_fts_index('docs', 'id', '{FIELD}', stemmer='none', stopwords='none')")
    con.execute("CHECKPOINT")
    clock.lap("index")
    count = con.execute("SELECT count(*) FROM docs").fetchone()[0]
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    con.close()
    assert count == n_rows, (count, n_rows)
    return clock.result(p["duckdb"], threads=threads)


def _build(system: str, n_rows: int, corpus_name: str) -> dict:
    _log(f"building {system} over {n_rows:,} rows in a fresh subprocess ...")
    if system in ("ours", "tantivy"):
        return bc._run_child(system, n_rows, corpus_name)
    if system == "sqlite":
        return bench_sql._run_sqlite_child(n_rows, corpus_name)
    return common.run_child(__file__, ["--child", system, "--rows", str(n_rows), "--corpus", corpus_name], _log)


def _normalize_build(system: str, r: dict) -> dict:
    """The columns every system reports, plus its own phases (seconds) for the notes."""
    if system == "ours":
        phases = {"load": r["load_s"], "index": r["index_s"]}
    elif system == "tantivy":
        phases = {"add_document": r["add_s"], "commit": r["commit_s"], "merge": r["merge_s"]}
    elif system == "sqlite":
        phases = {"insert": r["insert_s"], "optimize": r["optimize_s"]}
    else:
        phases = r["phases"]
    return {"total_s": r["total_s"], "cpu_s": r["cpu_s"], "peak_rss_mb": r["peak_rss_mb"],
            "rss_base_mb": r["rss_base_mb"], "disk_mb": r["disk_mb"], "disk_index_mb": r.get("disk_index_mb"),
            "phases": phases, "raw": r}


# -- the systems at query time --------------------------------------------------------------
class Peer:
    """One system at query time: how a query class is written for it and how it is run."""

    name = ""
    api = ""
    slow = False  # runs only the first --slow-queries queries of each class

    def open(self, paths: dict[str, Path], n_rows: int) -> None:
        raise NotImplementedError

    def query(self, cls: str, terms: tuple[str, ...]):
        """The system's query object for a class (raises ``NotSupported``)."""
        raise NotImplementedError

    def search(self, q, k: int):
        """The timed call: the system's natural top-k API."""
        raise NotImplementedError

    def top(self, q, k: int) -> tuple[list[int], list[float]]:
        """Corpus ids and scores (higher is better) of the top k, in the system's order."""
        raise NotImplementedError

    def count(self, q) -> int | None:
        """Number of matching rows, where the system reports it."""
        return None


class Ours(Peer):
    name = "ours"
    api = "`t.search(tree, limit=k, columns=[])` (returns `_rowid`, `_score`)"

    def open(self, paths, n_rows):
        import datafusion_fts as fts

        self.db = fts.connect(paths["ours"])
        self.table = self.db.table(bc.TABLE)
        assert self.table.count_rows() == n_rows

    def query(self, cls, terms):
        return bc._our_tree(cls, terms)

    def search(self, q, k):
        return self.table.search(q, limit=k, columns=[])

    def top(self, q, k):
        res = self.search(q, k)
        return res.column("_rowid").to_pylist(), res.column("_score").to_pylist()

    def count(self, q):
        return self.table.search(q, limit=None, columns=[]).num_rows


class OursSql(Ours):
    name = "ours_sql"
    api = ("`db.sql(\"SELECT _rowid, score() FROM docs WHERE MATCH(body, '<q>') ORDER BY score() DESC "
           "LIMIT k\").to_arrow_table()`")

    def query(self, cls, terms):
        return common.our_text(cls, terms)  # Lucene syntax: `a b`, `+a +b`, `+a -b` read the same here

    def search(self, q, k):
        return self.db.sql(bench_sql._sql_rowid(q, k)).to_arrow_table()

    def top(self, q, k):
        res = self.search(q, k)
        return res.column(0).to_pylist(), res.column(1).to_pylist()

    def count(self, q):
        return None


class OursRows(Ours):
    name = "ours_rows"
    api = "`t.search(tree, limit=k)` (returns `_rowid`, `_score` and every column: id, title, body)"

    def search(self, q, k):
        return self.table.search(q, limit=k)


class OursSqlRows(OursSql):
    name = "ours_sql_rows"
    api = ("`db.sql(\"SELECT _rowid, id, title, body, score() FROM docs WHERE MATCH(body, '<q>') "
           "ORDER BY score() DESC LIMIT k\").to_arrow_table()`")

    def search(self, q, k):
        return self.db.sql(f"SELECT _rowid, {', '.join(ROW_COLUMNS)}, score() AS s FROM docs "
                           f"WHERE MATCH(body, '{q}') ORDER BY score() DESC LIMIT {k}").to_arrow_table()

    def top(self, q, k):
        res = self.search(q, k)
        return res.column(0).to_pylist(), res.column("s").to_pylist()


class Tantivy(Peer):
    name = "tantivy"
    api = "`searcher.search(index.parse_query(q, ['body']), k, count=False)` (top-k only, like the others)"

    def open(self, paths, n_rows):
        import tantivy

        self.index = tantivy.Index.open(str(paths["tantivy"]))
        self.index.reload()
        self.searcher = self.index.searcher()
        assert self.searcher.num_docs == n_rows

    def query(self, cls, terms):
        q = self.index.parse_query(common.our_text(cls, terms), [FIELD])
        assert repr(q).count("TermQuery") == len(terms), (cls, terms, repr(q))
        return q

    def search(self, q, k):
        return self.searcher.search(q, k, count=False)

    def top(self, q, k):
        hits = self.search(q, k).hits
        return [self.searcher.doc(addr)["id"][0] for _, addr in hits], [s for s, _ in hits]

    def count(self, q):
        return self.searcher.search(q, 1, count=True).count


class Sqlite(Peer):
    name = "sqlite"
    api = "`con.execute(\"SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT k\")`"

    def open(self, paths, n_rows):
        self.con = sqlite3.connect(paths["sqlite"])
        assert self.con.execute("SELECT count(*) FROM docs").fetchone()[0] == n_rows

    def query(self, cls, terms):
        return common.fts5_text(cls, terms)

    def search(self, q, k):
        return self.con.execute(bench_sql._sqlite_sql(k), (q,)).fetchall()

    def top(self, q, k):
        rows = self.search(q, k)
        return [r[0] for r in rows], [-r[1] for r in rows]  # bm25() is negated: lower is better

    def count(self, q):
        return self.con.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (q,)).fetchone()[0]


class Bm25s(Peer):
    name = "bm25s"
    api = ("`retriever.retrieve([tokens], k=k, n_threads=0, show_progress=False)` "
           "(numba backend, tokens pre-split)")

    def open(self, paths, n_rows):
        import bm25s

        self.retriever = bm25s.BM25.load(paths["bm25s"], load_vocab=True, show_progress=False, backend="numba")
        assert self.retriever.scores["num_docs"] == n_rows

    def query(self, cls, terms):
        if cls in ("and2", "and2_fm", "must_not"):
            raise NotSupported(NO_BOOLEAN)
        return list(terms)

    def search(self, q, k):
        return self.retriever.retrieve([q], k=k, n_threads=0, show_progress=False)

    def top(self, q, k):
        res = self.search(q, k)
        docs, scores = res.documents[0].tolist(), res.scores[0].tolist()
        keep = [i for i, s in enumerate(scores) if s > 0]  # with fewer than k matches it pads with score 0
        return [docs[i] for i in keep], [scores[i] for i in keep]

    def count(self, q):
        import numpy as np

        return int(np.count_nonzero(self.retriever.get_scores(q)))


class Lance(Peer):
    name = "lance"
    api = ("`ds.to_table(full_text_query=MatchQuery|BooleanQuery, limit=k, columns=['_score'], "
           "with_row_id=True, disable_scoring_autoprojection=True)`")

    def open(self, paths, n_rows):
        import lance

        self.ds = lance.dataset(paths["lance"])
        assert self.ds.count_rows() == n_rows
        # Row ids are row addresses (fragment id << 32 | offset); map them to corpus ids.
        self.starts, start = {}, 0
        for frag in self.ds.get_fragments():
            self.starts[frag.fragment_id] = start
            start += frag.count_rows()

    def query(self, cls, terms):
        from lance.query import BooleanQuery, FullTextOperator, MatchQuery, Occur

        if cls in ("frequent", "rare", "or2", "or3"):
            return MatchQuery(" ".join(terms), FIELD)
        if cls in ("and2", "and2_fm"):
            return MatchQuery(" ".join(terms), FIELD, operator=FullTextOperator.AND)
        if cls == "must_not":
            return BooleanQuery([(Occur.MUST, MatchQuery(terms[0], FIELD)),
                                 (Occur.MUST_NOT, MatchQuery(terms[1], FIELD))])
        raise ValueError(cls)

    def search(self, q, k):
        return self.ds.to_table(full_text_query=q, limit=k, columns=["_score"], with_row_id=True,
                                disable_scoring_autoprojection=True)

    def top(self, q, k):
        res = self.search(q, k)
        ids = [self.starts[a >> 32] + (a & 0xFFFFFFFF) for a in res.column("_rowid").to_pylist()]
        return ids, res.column("_score").to_pylist()

    def count(self, q):
        return self.ds.to_table(full_text_query=q, columns=[], with_row_id=True,
                                disable_scoring_autoprojection=True).num_rows


class LanceRows(Lance):
    name = "lance_rows"
    api = ("`ds.to_table(full_text_query=..., limit=k, columns=['id', 'title', 'body', '_score'], "
           "with_row_id=True)`")

    def search(self, q, k):
        return self.ds.to_table(full_text_query=q, limit=k, columns=[*ROW_COLUMNS, "_score"], with_row_id=True)


class DuckDb(Peer):
    name = "duckdb"
    slow = True  # every match_bm25 call joins the whole postings table: ~0.1-0.3 s at 100k rows
    api = ("`con.execute(\"SELECT id, score FROM (SELECT id, fts_main_docs.match_bm25(id, ?, conjunctive := c) "
           "AS score FROM docs) WHERE score IS NOT NULL ORDER BY score DESC LIMIT k\")` (the extension's "
           "documented pattern); must + must_not as two `match_bm25` columns, the second `IS NULL`")

    def open(self, paths, n_rows):
        self.con = _duckdb_connect(str(paths["duckdb"]), read_only=True)
        assert self.con.execute("SELECT count(*) FROM docs").fetchone()[0] == n_rows

    @staticmethod
    def _sql(qclass: str, select: str, tail: str) -> str:
        if qclass == "must_not":
            inner = ("SELECT id, fts_main_docs.match_bm25(id, ?) AS score, "
                     "fts_main_docs.match_bm25(id, ?) AS neg FROM docs")
            where = "score IS NOT NULL AND neg IS NULL"
        else:
            conj = 1 if qclass in ("and2", "and2_fm") else 0
            inner = f"SELECT id, fts_main_docs.match_bm25(id, ?, conjunctive := {conj}) AS score FROM docs"
            where = "score IS NOT NULL"
        return f"SELECT {select} FROM ({inner}) sq WHERE {where}{tail}"

    def query(self, cls, terms):
        params = (terms[0], terms[1]) if cls == "must_not" else (" ".join(terms),)
        return {k: self._sql(cls, "id, score", f" ORDER BY score DESC LIMIT {k}") for k in KS} | {
            "count": self._sql(cls, "count(*)", ""), "params": params}

    def search(self, q, k):
        return self.con.execute(q[k], q["params"]).fetchall()

    def top(self, q, k):
        rows = self.search(q, k)
        return [r[0] for r in rows], [r[1] for r in rows]

    def count(self, q):
        return self.con.execute(q["count"], q["params"]).fetchone()[0]


PEERS: dict[str, type[Peer]] = {p.name: p for p in (Ours, OursSql, Tantivy, Sqlite, Bm25s, Lance, DuckDb,
                                                     OursRows, OursSqlRows, LanceRows)}


def _prepare(peer: Peer, sets: dict, slow_queries: int) -> tuple[dict, dict[str, str]]:
    """Each class's query objects for ``peer``, and the reason for each class it cannot run."""
    queries, na = {}, {}
    for cls, term_list in sets.items():
        try:
            queries[cls] = [peer.query(cls, terms) for terms in term_list[:slow_queries if peer.slow else None]]
        except NotSupported as exc:
            na[cls] = str(exc)
    return queries, na


def _child_query(system: str, n_rows: int, corpus_name: str, n_queries: int, slow_queries: int) -> dict:
    """Memory of one system at query time: opened in a fresh process, every query run once."""
    _probe(system)  # the imports, so the baseline includes the libraries
    base = common.proc_status_kb()
    if SHARES.get(system, system) == "ours":  # (the baseline: a tiny database opened and searched)
        import pyarrow

        import datafusion_fts as fts

        db = fts.connect()
        tiny = db.create_table("tiny", pyarrow.table({"id": [1, 2], "title": ["a", "b"], "body": ["alpha beta", "beta"]}))
        tiny.create_index("body")
        tiny.search("alpha", limit=10)
        db.sql("SELECT id, title, body, score() FROM tiny WHERE MATCH(body, 'beta') ORDER BY score() DESC LIMIT 10").to_arrow_table()
    warm = common.proc_status_kb()
    peer = PEERS[system]()
    t0 = time.perf_counter()
    peer.open(_paths(n_rows, corpus_name), n_rows)
    open_s = time.perf_counter() - t0
    opened = common.proc_status_kb()
    queries, _ = _prepare(peer, bc._query_sets(n_queries, corpus_name, n_rows), slow_queries)
    t0 = time.perf_counter()
    calls = 0
    for qs in queries.values():
        for k in KS:
            for q in qs:
                peer.search(q, k)
                calls += 1
    end = common.proc_status_kb()
    return {"open_s": open_s, "queries_s": time.perf_counter() - t0, "calls": calls,
            "rss_base_mb": _mb(base["VmHWM"]), "rss_warm_mb": _mb(warm["VmRSS"]), "rss_open_mb": _mb(opened["VmRSS"]),
            "peak_rss_mb": _mb(end["VmHWM"]), "end_anon_mb": _mb(end["RssAnon"]), "end_file_mb": _mb(end["RssFile"])}


# -- the latency run ----------------------------------------------------------------------------
def _overlap(a: list[int], b: list[int]) -> float:
    denom = max(len(a), len(b))
    return 1.0 if denom == 0 else len(set(a) & set(b)) / denom


def _search_bench(n_rows: int, corpus_name: str, systems: list[str], n_queries: int, repeats: int,
                  slow_queries: int) -> dict:
    paths = _paths(n_rows, corpus_name)
    sets = bc._query_sets(n_queries, corpus_name, n_rows)
    peers: dict[str, Peer] = {}
    for name in systems:
        peer = PEERS[name]()
        if SHARES.get(name) in peers:  # one connection serves all of a system's APIs
            vars(peer).update(vars(peers[SHARES[name]]))
        else:
            t0 = time.perf_counter()
            peer.open(paths, n_rows)
            _log(f"opened {name} in {(time.perf_counter() - t0) * 1e3:.0f} ms")
        peers[name] = peer
    prepared = {name: _prepare(peer, sets, slow_queries) for name, peer in peers.items()}
    queries = {name: p[0] for name, p in prepared.items()}
    na = {name: p[1] for name, p in prepared.items()}

    first_ms = {}
    for name, peer in peers.items():
        t0 = time.perf_counter()
        peer.search(queries[name]["frequent"][0], 10)
        first_ms[name] = (time.perf_counter() - t0) * 1e3

    _log("sanity: match counts and top-10 overlap ...")
    ours = peers["ours"]
    all_counts = {cls: [ours.count(q) for q in queries["ours"][cls]] for cls in CLASSES}
    counts: dict[str, dict[str, list[list[int]]]] = {}
    agreement: dict[str, dict[str, list[dict]]] = {}
    for name, peer in peers.items():
        if name == "ours" or name in ROWS:  # (the rows variants run the same searches)
            continue
        for cls, qs in queries[name].items():
            for j, q in enumerate(qs[:COUNT_CHECKS_PER_CLASS]):
                c = peer.count(q)
                if c is not None:
                    counts.setdefault(name, {}).setdefault(cls, []).append([all_counts[cls][j], c])
            for j, q in enumerate(qs[:AGREEMENT_PER_CLASS]):
                o_ids, o_scores = ours.top(queries["ours"][cls][j], 10)
                p_ids, p_scores = peer.top(q, 10)
                ratio = p_scores[0] / o_scores[0] if o_scores and p_scores and o_scores[0] else None
                agreement.setdefault(name, {}).setdefault(cls, []).append(
                    {"overlap": _overlap(o_ids, p_ids), "top1_ratio": ratio, "same_order": o_ids == p_ids})

    samples: dict[tuple[str, str, int], list[tuple[int, float]]] = {
        (name, cls, k): [] for name in peers for cls in CLASSES for k in KS}
    names = list(peers)
    blocks = [(cls, k) for cls in CLASSES for k in KS]

    def run_pass(index: int, record: bool) -> None:
        """Each system runs a (class, k) block of queries on its own, the systems' order
        rotated from block to block and pass to pass. Not query by query: a DuckDB or SQL call
        sweeps hundreds of MB and left the next system's call several times slower."""
        perf = time.perf_counter_ns
        for b, (cls, k) in enumerate(blocks):
            shift = (b + index) % len(names)
            for name in names[shift:] + names[:shift]:
                peer, out = peers[name], samples[(name, cls, k)]
                for j, q in enumerate(queries[name].get(cls, ())):
                    t0 = perf()
                    peer.search(q, k)
                    t1 = perf()
                    if record:
                        out.append((j, (t1 - t0) / 1e6))

    _log("search: warm-up pass ...")
    run_pass(0, record=False)
    for r in range(repeats):
        _log(f"search: timed pass {r + 1}/{repeats} ...")
        gc.collect()
        run_pass(r + 1, record=True)

    subsets = sorted({len(qs) for name in names for qs in queries[name].values()} - {n_queries})
    latency: dict[str, dict[str, dict]] = {}
    for cls in CLASSES:
        for k in KS:
            row = latency.setdefault(f"{cls}@{k}", {})
            for name in peers:
                xs = samples[(name, cls, k)]
                if not xs:
                    row[name] = {"na": na[name].get(cls, "not run")}
                    continue
                ms = [x for _, x in xs]
                row[name] = {"p50": bc._pct(ms, 50), "p95": bc._pct(ms, 95), "n": len(ms),
                             "queries": len(queries[name][cls])}
                # p50 over the first m queries only, to compare with a system run on those alone
                row[name]["p50_first"] = {str(m): bc._pct([x for j, x in xs if j < m], 50) for m in subsets}
    return {"latency": latency, "na": na, "first_ms": first_ms, "all_counts": all_counts,
            "counts": counts, "agreement": agreement, "rss_main_peak_mb": bc._peak_rss_mb()}


# -- report -------------------------------------------------------------------------------------
F = bc._fmt_ms

ANALYSIS = {
    "ours": "`t.create_index(\"body\")`: default `simple` analyzer; BM25 k1=1.2, b=0.75 in float64, exact "
            "document lengths; no positions. The table (id, title, body) is copied into managed Parquet first.",
    "tantivy": "bench_core's build: default tokenizer (split on non-alphanumerics, lowercase, drop > 40 bytes), "
               "positions on (its default), stored+fast `id`, default writer heap and threads.",
    "sqlite": "bench_sql's build: `fts5(body, tokenize='unicode61')` with rowid = id (stores the body text), "
              "then `optimize`.",
    "bm25s": f"`bm25s.tokenize(bodies, lower=True, stopwords=None)` (its regex `\\b\\w\\w+\\b`; every synthetic "
             f"corpus word has >= 2 letters), `BM25(k1={K1}, b={B}, method=\"lucene\")`, `.index()`, `.save()`; the whole "
             "corpus is held in memory as Python lists to build (bm25s has no streaming build). Scores are "
             "precomputed per (term, doc) at index time (float32).",
    "lance": "`lance.write_dataset` of the Parquet batches (id, title, body), then "
             "`create_scalar_index(\"body\", \"INVERTED\", " + ", ".join(f"{k}={v!r}" for k, v in LANCE_OPTS.items())
             + ")`; build workers and memory at their defaults.",
    "duckdb": f"`CREATE TABLE docs AS SELECT id, body FROM read_parquet(...)`, then `PRAGMA create_fts_index('docs', "
              f"'id', 'body', stemmer='none', stopwords='none')` (the extension's tokenizer: lowercase, strip accents, "
              f"split on non-letters; k=1.2, b=0.75 defaults); `SET memory_limit='{DUCKDB_MEMORY_LIMIT}'` (its "
              "default is 80 % of RAM), threads at the default.",
}

STORED = {"ours": "table (id, title, body) + index", "tantivy": "index with positions + stored id",
          "sqlite": "body text + index", "bm25s": "score matrix + vocabulary", "lance": "dataset (id, title, body) + index",
          "duckdb": "table (id, body) + fts tables"}

VARIANT = {
    "tantivy": "Lucene's BM25 like ours (same idf, (k1+1) numerator), but in float32 and with document length "
               "quantized to a one-byte field norm, so scores are close, not equal.",
    "sqlite": "idf = ln((N - n + 0.5) / (n + 0.5)), replaced by 1e-6 where ≤ 0 (a term in more than half the rows), "
              "against ours ln(1 + (N - n + 0.5) / (n + 0.5)); same k1, b, length normalisation. `bm25()` is "
              "negated (lower is better); the table shows -bm25. Frequent terms weigh far less than in ours, "
              "so OR rankings differ.",
    "bm25s": "`method=\"lucene\"`: the same idf as ours, but the tf part tf / (tf + k1 (1 - b + b dl/avgdl)) without "
             "the (k1 + 1) factor, so every score is ours / 2.2 (float32): the same ranking up to float32 ties.",
    "lance": "the same formula as ours (idf ln(1 + (N - n + 0.5)/(n + 0.5)), (k1+1) tf / (tf + k1 (1 - b + b dl/avgdl)), "
             "k1 = 1.2, b = 0.75 fixed), in float32: ratio 1 up to rounding.",
    "duckdb": "the `match_bm25` macro computes the same formula as ours but with SQL `log()`, which in DuckDB is "
              "base 10: every score is ours / ln 10 = 0.434 × ours (float64), the same ranking.",
    "ours_sql": "the same engine as `t.search`: identical rows and scores expected.",
}


# How each peer's analyzer splits real text differently from ours (on the synthetic corpus,
# lowercase letters separated by spaces, they all agree).
REAL_TEXT_TOKENS = {
    "ours_sql": "the same index as `t.search`.",
    "tantivy": "the same split as ours (runs of letters and digits, lowercased, > 40 bytes dropped): the same "
               "terms and document lengths, up to characters Rust's and our Unicode tables class differently.",
    "lance": "its `simple` tokenizer is Tantivy's: the same terms and lengths as ours.",
    "sqlite": "`unicode61` also removes diacritics (`é` → `e`), so a few accented words become ASCII ones; otherwise "
              "it splits like ours.",
    "bm25s": "its regex `\\w\\w+` keeps `_` inside words (`file_name` is one token, `file` and `name` for ours) "
             "and drops one-character tokens: docstrings are full of identifiers, so matches and document lengths "
             "differ.",
    "duckdb": "everything but a-z separates words after lowercasing and stripping accents: digits split (`utf8` is "
              "`utf`), `_` splits as for ours; matches and document lengths differ where words hold digits.",
}


def _corpus_lines(env: dict) -> list[str]:
    """The Setup bullet describing the corpus."""
    import corpus

    n = env["rows"]
    if common.corpus_of(env) == "synthetic":
        return [f"- **Corpus**: `bench-data/corpus-{n}.parquet` ({env['parquet_mb']:.1f} MB zstd), `corpus.write_parquet"
                f"(path, {n:,}, seed={bc.SEED})`: {corpus.VOCAB_SIZE:,}-word random-letter vocabulary, Zipf "
                f"s={corpus.ZIPF_S}, bodies ~{corpus.BODY_MEAN_WORDS:.0f} words; only `body` is indexed, by every "
                "system."]
    info = env["corpus_info"]
    return [f"- **Corpus**: `bench-data/corpus-{bc.stem(n, env['corpus'])}.parquet` ({env['parquet_mb']:.1f} MB "
            f"zstd), real English text: the docstrings of this Python's standard library (Python {info['python']}, "
            "read with `ast` by `datafusion_fts.demo_corpus.stdlib_docstrings`, test directories skipped), "
            f"**{n:,} documents** (title = a docstring's first line, body = the whole docstring), "
            f"**{info['body_bytes'] / 1e6:.2f} MB** of body text, {info['tokens']:,} tokens (mean "
            f"{info['tokens'] / n:.0f} a body) over {info['distinct_terms']:,} distinct terms by our analyzer; only "
            "`body` is indexed, by every system."]


def _bands_text(env: dict) -> str:
    """Where the query classes' terms come from."""
    import corpus

    if common.corpus_of(env) == "synthetic":
        return ("bench_core's classes and terms: frequent band = ranks 0-99, medium = 1,000-9,999, "
                "rare = 50,000-149,999")
    info = env["corpus_info"]
    b = info["bands"]
    lo, hi = corpus.REAL_MEDIUM_DF
    return (f"bench_core's classes; the terms come from the corpus's **real document frequencies** (df): of its "
            f"{info['plain_terms']:,} plain words (lowercase ASCII, 3-40 letters, not one of Lucene's 33 English "
            "stop words: the same term for ours, Tantivy and Lance, none of which stems here), frequent band = the "
            f"{b['frequent']['terms']} of highest df (df {b['frequent']['df_min']:,}-{b['frequent']['df_max']:,}), "
            f"medium = the {b['medium']['terms']:,} in {lo:.1%}-{hi:.0%} of the documents (df "
            f"{b['medium']['df_min']}-{b['medium']['df_max']}), rare = the {b['rare']['terms']:,} in "
            f"{corpus.REAL_RARE_DF[0]}-{corpus.REAL_RARE_DF[1]} documents; drawn with bench_core's seeds, so the "
            "sets are a function of the corpus")


def _summary(res: dict, img: str) -> list[str]:
    """One screen first: summary.py's questions for this run alone, every ratio ours / peer."""
    import summary

    n, info = res["meta"]["rows"], res["meta"]["corpus_info"]
    out = [f"The corpus: the **{n:,} docstrings** of Python {info['python']}'s standard library, "
           f"**{info['body_bytes'] / 1e6:.2f} MB** of English text (~{info['tokens'] / n:.0f} words a docstring); "
           "the query terms are drawn from its **real document frequencies** (see Query latency). At this size a "
           "query reads at most a few thousand postings, so latencies are mostly each system's cost per call, "
           "which the synthetic 1M and 10M runs above put in proportion.", "",
           "**Every ratio is ours / peer: lower is better.** Latency cells are the range of the p50s over the 7 "
           "query classes (detail below).", "",
           "| question | peer | ours | peer | **ours / peer** |", "|---|---|---:|---:|---:|"]
    out += ["| " + " | ".join(row) + " |" for row in summary._rows({res["meta"]["rows"]: res})]
    out += ["", "What SQL and returning rows cost: " + "; ".join(summary._costs(res)) + ".", "",
            f"![Latency returning rows]({img}-rows.png)", ""]
    return out


def _p50(lat: dict, name: str) -> float | None:
    return lat[name].get("p50") if name in lat else None


def _report(res: dict) -> str:
    """The markdown section, from the results alone (so it can be rewritten without a rerun)."""
    env, build, qmem, s, unavailable = (res[k] for k in ("meta", "build", "query_memory", "search", "unavailable"))
    n, queries, repeats = env["rows"], env["queries"], env["repeats"]
    corpus_name, img = common.corpus_of(env), "img/" + common.peers_prefix(env)
    lines: list[str] = [SECTIONS[corpus_name], ""]
    add = lines.append
    flags = (f" --queries {queries} --repeats {repeats} --slow-queries {env['slow_queries']}"
             + (" --skip-build" if env["skip_build"] else ""))
    if corpus_name == "synthetic":
        rows = f"--rows {n}"
    else:
        rows = f"--corpus {corpus_name}" + (f" --rows {env['rows_arg']}" if env.get("rows_arg") else "")
    add(f"Generated by `python benchmarks/bench_peers.py {rows}{flags}` on {env['date']}; plots by "
        f"`python benchmarks/plot_peers.py docs/{img}.json` from the results file it wrote.")
    add("")
    busy = max(env.get(f"other_{phase}_cores", 0.0) for phase in ("build", "qmem", "search"))
    if busy > BUSY_CORES:
        add(f"> **Busy machine**: other processes used up to ≈{busy:.2f} of the {env['machine']['cores']} cores "
            "while these numbers were taken (see Setup). Every timing is inflated, p95s most, and unevenly "
            "between systems and classes (a ratio can flip from one k to the next): read them as a functional "
            "run, and rerun the script on a quiet machine for figures to quote. Sizes, match counts, overlaps "
            "and score ratios do not depend on the load; peak RSS barely does.")
        add("")
    if corpus_name != "synthetic":
        lines += _summary(res, img)
    add("### Setup")
    add("")
    m = env["machine"]
    add(f"- **Machine**: {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}")
    add(f"- **Load average** (1/5/15 min): at start {env['load_start']}, before the search phase "
        f"{env['load_search']}, at end {env['load_end']}.")
    add(f"- **Other processes' CPU** (machine-wide /proc/stat busy time minus this benchmark's own): during the "
        f"builds {env['other_build']}; during the query-memory runs {env['other_qmem']}; during the latency run "
        f"{env['other_search']}. On 2 cores, anything well above 0 means a shared, busy machine: latencies "
        "and build times are then inflated, and unevenly so between systems.")
    add(f"- **Code**: {env['git']} when the search phase imported it.")
    add(f"- **Python** {m['python']}; " + ", ".join(f"{k} {v}" for k, v in env["versions"].items()))
    lines += _corpus_lines(env)
    add("- **Index configuration** (each system's analyzer set as close to ours as it allows):")
    for name in BUILDS:
        if name not in unavailable:
            add(f"  - {LABEL[name]}: {ANALYSIS[name]}")
    if env.get("duckdb_note"):
        add(f"- **DuckDB fts extension**: {env['duckdb_note']}")
    for name, err in unavailable.items():
        add(f"- **{LABEL[name]}: not installable here** — `{err}`")
    add("")

    add("### Index build (each system in a fresh subprocess)")
    add("")
    if env.get("build_note"):
        add(env["build_note"])
        add("")
    add("| system | on disk holds | build s | **docs/s** | ours build s / this | CPU s | peak RSS MB | "
        "RSS after imports MB | on disk MB | of which index MB |")
    add("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in BUILDS:
        if name not in build:
            continue
        b = build[name]
        rate = n / b["total_s"]
        idx = f"{b['disk_index_mb']:,.1f}" if b.get("disk_index_mb") else "—"
        add(f"| {LABEL[name]} | {STORED[name]} | {b['total_s']:.1f} | **{rate:,.0f}** | "
            f"{build['ours']['total_s'] / b['total_s']:.2f}x | {b['cpu_s']:.1f} | {b['peak_rss_mb']:,.0f} | {b['rss_base_mb']:,.0f} | "
            f"{b['disk_mb']:,.1f} | {idx} |")
    add("")
    add("Build phases (s): " + "; ".join(
        f"{LABEL[name]} " + ", ".join(f"{k} {v:.1f}" for k, v in build[name]["phases"].items())
        for name in BUILDS if name in build) + ".")
    add("")
    add("docs/s = rows / (load + index): for ours, Lance and DuckDB it includes copying the table into the "
        "system's own storage; Tantivy, SQLite and bm25s read the Parquet file as they index. "
        "`ours build s / this`: lower is better, < 1 means datafusion-fts builds faster. Peak RSS is the child's own `VmHWM` "
        "(interpreter and libraries included, see the after-imports column); CPU s over 2 cores shows "
        "which builds use both, and on a busy machine it is the less load-sensitive figure (wall time then "
        "depends on how much of the machine each build happened to get).")
    add("")
    add(f"![Build throughput]({img}-build.png)")
    add("")

    add("### Query latency")
    add("")
    add(f"{queries} distinct queries per class ({_bands_text(env)}), at k=10 and k=100. One warm-up pass over "
        "every query, then "
        f"{repeats} timed pass(es). Within a pass each system runs a (class, k) block of queries on its own, "
        "the systems' order rotated from block to block and pass to pass (query-by-query interleaving was tried "
        "first: a DuckDB or SQL call sweeps hundreds of MB and left the next system's call 3-5x slower). "
        f"p50/p95 over the {queries * repeats} timings of a class, k and system. Milliseconds, one calling "
        "thread, all systems opened from disk in this process (each library uses its own threads inside a call "
        "as it does by default).")
    slow = [x for x in s["first_ms"] if PEERS[x].slow]
    if slow:
        add("")
        add(f"{', '.join(LABEL[x] for x in slow)} ran only the first {env['slow_queries']} queries of each class "
            f"(`--slow-queries`): each of its calls is slow (0.1-1 s or more at a million rows), because `match_bm25` joins the whole "
            "postings table rather than looking the query terms up. Its ratio below compares with ours' p50 over "
            "the same queries.")
    add("")
    add("The APIs:")
    add("")
    for name in s["first_ms"]:
        add(f"- **{LABEL[name]}**: {PEERS[name].api}")
    add("")
    names = [x for x in s["first_ms"] if x not in ROWS]  # (the rows variants have a table of their own)
    add("| class | k | matches p50 | " + " | ".join(f"{LABEL[x]} p50 / p95" for x in names) + " |")
    add("|---|---:|---:|" + "---:|" * len(names))
    for cls in CLASSES:
        cnt = s["all_counts"][cls]
        for k in KS:
            row = s["latency"][f"{cls}@{k}"]
            cells = []
            for x in names:
                r = row[x]
                cells.append("n/a" if "na" in r else f"{F(r['p50'])} / {F(r['p95'])}")
            add(f"| {bc.CLASS_DOC[cls][0]} | {k} | {bc._pct(cnt, 50):,.0f} | " + " | ".join(cells) + " |")
    add("")
    others = [x for x in names if x != "ours" and x not in ROWS]
    add("**p50 ratio ours / peer, lower is better** (> 1: datafusion-fts `t.search` is slower; < 1: faster):")
    add("")
    add("| class | k | " + " | ".join(LABEL[x] for x in others) + " |")
    add("|---|---:|" + "---:|" * len(others))
    for cls in CLASSES:
        for k in KS:
            row = s["latency"][f"{cls}@{k}"]
            cells = []
            for x in others:
                r = row[x]
                if "na" in r:
                    cells.append("n/a")
                    continue
                o = row["ours"]["p50"] if r["queries"] == queries else row["ours"]["p50_first"][str(r["queries"])]
                cells.append(f"{o / r['p50']:.2f}x")
            add(f"| {bc.CLASS_DOC[cls][0]} | {k} | " + " | ".join(cells) + " |")
    add("")
    na_lines = sorted({(x, reason) for x in names for reason in s["na"][x].values()})
    for x, reason in na_lines:
        classes = ", ".join(bc.CLASS_DOC[c][0] for c, r in s["na"][x].items() if r == reason)
        add(f"- n/a for {LABEL[x]} ({classes}): {reason}.")
    add("- First query after opening (frequent term, k=10), ms: " + ", ".join(
        f"{LABEL[x]} {F(v)}" for x, v in s["first_ms"].items()) + ". It includes reading the index; bm25s "
        "compiles its numba retrieval kernels on the first call (they are not cached).")
    add("")
    add(f"![Latency by class and k]({img}-latency.png)")
    add("")

    lines += _rows_report(s, list(s["first_ms"]), img)
    add("### Memory")
    add("")
    add("Query memory: each system opened in a fresh subprocess that then runs every query of every class once "
        "at both k (`VmHWM`/`VmRSS`/`RssAnon`/`RssFile` from /proc/self/status). File-backed pages (memory-mapped "
        "or cached index files) count in RSS too; the last two columns split the RSS at the end.")
    add("")
    add("| system | build peak RSS MB | query: after imports MB | after open MB | peak MB | end anon MB | "
        "end file-backed MB | open ms |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in SEARCHERS:
        if name not in qmem:
            continue
        q = qmem[name]
        bpeak = build.get(name, {}).get("peak_rss_mb")
        add(f"| {LABEL[name]} | {f'{bpeak:,.0f}' if bpeak else '—'} | {q['rss_base_mb']:,.0f} | "
            f"{q['rss_open_mb']:,.0f} | {q['peak_rss_mb']:,.0f} | {q['end_anon_mb']:,.0f} | {q['end_file_mb']:,.0f} | "
            f"{q['open_s'] * 1e3:,.0f} |")
    add("")
    add(f"The latency run's own process, with every system open at once, peaked at {s['rss_main_peak_mb']:,.0f} MB.")
    add("")
    add(f"![Memory]({img}-memory.png)")
    add("")
    add(f"![On-disk size]({img}-size.png)")
    add("")

    add("### Sanity checks")
    add("")
    add(f"Match counts: ours `limit=None` row count against the system's own count, on the first "
        f"{COUNT_CHECKS_PER_CLASS} queries of each class it runs (Tantivy `count=True`, SQLite and DuckDB "
        "`count(*)`, Lance `to_table` without limit, bm25s the non-zero entries of `get_scores`). Top-10: on the "
        f"first {AGREEMENT_PER_CLASS} queries of each class, overlap = |ours ∩ peer| / max(|ours|, |peer|) over corpus "
        "ids, and the peer's top-1 score ÷ ours.")
    add("")
    add("| system | counts agree | mean top-10 overlap | same top-10 order | top-1 score ÷ ours (median, min-max) | "
        "overlap per class |")
    add("|---|---:|---:|---:|---:|---|")
    for name in others:
        cs = [pair for v in s["counts"].get(name, {}).values() for pair in v]
        agree = f"{sum(a == b for a, b in cs)}/{len(cs)}" if cs else "not reported"
        ag = [a for v in s["agreement"][name].values() for a in v]
        ratios = sorted(a["top1_ratio"] for a in ag if a["top1_ratio"] is not None)
        rtxt = (f"{ratios[len(ratios) // 2]:.3f} ({ratios[0]:.3f}-{ratios[-1]:.3f})" if ratios else "—")
        per = ", ".join(f"{c} {sum(a['overlap'] for a in v) / len(v):.2f}" for c, v in s["agreement"][name].items())
        add(f"| {LABEL[name]} | {agree} | {sum(a['overlap'] for a in ag) / len(ag):.2f} | "
            f"{sum(a['same_order'] for a in ag)}/{len(ag)} | {rtxt} | {per} |")
    add("")
    add("How each system's BM25 differs from ours (score(t, d) = ln(1 + (N - n + 0.5)/(n + 0.5)) · (k1 + 1) tf / "
        "(tf + k1 (1 - b + b dl/avgdl)), k1 = 1.2, b = 0.75, float64, exact dl):")
    add("")
    for name in others:
        add(f"- **{LABEL[name]}**: {VARIANT[name]}")
    add("")
    if corpus_name != "synthetic":
        add("On real text the analyzers differ too (on the synthetic corpus, lowercase letters between spaces, "
            "they agree): the query terms are plain words every system keeps whole, but a system that splits "
            "the text around them differently counts other matches and document lengths, which moves scores and "
            "the top 10 even where the BM25 formula is ours:")
        add("")
        for name in others:
            add(f"- **{LABEL[name]}**: {REAL_TEXT_TOKENS[name]}")
        add("")
    add("Overlap below 1 for systems whose scores are a constant multiple of ours comes from ties at the "
        "10th place: ours breaks them by row id ascending, the others in their own order (or float32 rounding "
        "merges near-ties).")
    add("")
    return "\n".join(lines)


def _rows_report(s: dict, names: list[str], img: str) -> list[str]:
    """What a real query costs: the top k with every column (id, title, body), beside Lance
    returning the same columns and beside each system's ids-only call."""
    if not {"ours_rows", "lance_rows"} <= set(names):
        return []
    out = ["### Returning the rows (issue 17)", "",
           "The top k with their columns (id, title, body) and scores, as an application asks for them, "
           "beside the ids-only calls above. p50 in ms; ratios ours ÷ Lance returning the same columns "
           "(lower is better; ≤ 1.00 meets issue 17's target).", "",
           "| class | k | ours ids | ours rows | ours SQL rows | Lance ids | Lance rows | "
           "**rows ÷ Lance rows** | **SQL rows ÷ Lance rows** |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    worst = 0.0
    for cls in CLASSES:
        for k in KS:
            row = s["latency"][f"{cls}@{k}"]
            p = {x: row[x].get("p50") if x in row else None for x in ("ours", "ours_rows", "ours_sql_rows", "lance", "lance_rows")}
            lance = p["lance_rows"]
            ratios = [p[x] / lance if p[x] and lance else None for x in ("ours_rows", "ours_sql_rows")]
            worst = max([worst, *[r for r in ratios if r]])
            cells = [F(p[x]) if p[x] else "n/a" for x in p] + [f"**{r:.2f}x**" if r else "n/a" for r in ratios]
            out.append(f"| {bc.CLASS_DOC[cls][0]} | {k} | " + " | ".join(cells) + " |")
    out += ["", f"Worst ratio: {worst:.2f}x.", "", f"![Latency returning rows]({img}-rows.png)", ""]
    return out


# -- main ---------------------------------------------------------------------------------------
def _versions() -> dict[str, str]:
    out = {p: bc._version(p) for p in ("datafusion-fts", "datafusion", "pyarrow", "numpy", "numba", "tantivy",
                                       "bm25s", "pylance", "duckdb", "duckdb-ext-fts", "matplotlib")}
    out["SQLite"] = sqlite3.sqlite_version
    return out


def _duckdb_note() -> str:
    try:
        con = _duckdb_connect(":memory:")
    except Exception:  # noqa: BLE001 - reported as not installable instead
        return ""
    version, path = con.execute("SELECT extension_version, install_path FROM duckdb_extensions() "
                                "WHERE extension_name = 'fts'").fetchone()
    con.close()
    where = "the `duckdb-ext-fts` wheel" if "duckdb_ext" in path else path
    return (f"`INSTALL fts` downloads the extension from DuckDB's own extension repository, which this sandbox "
            f"cannot reach (it fails with \"Failed to download extension\" / \"Could not establish connection\"). "
            f"The PyPI package `duckdb-ext-fts` (a third-party repackaging) ships the extension binary for one "
            f"DuckDB release and pins it (`duckdb=={bc._version('duckdb')}`); it is loaded from {where} with "
            f"`LOAD fts` (extension version `{version}`) with DuckDB's signature check on, so it is DuckDB's own "
            "signed build.")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=bc._parse_rows,
                        help="corpus rows (default 1,000,000); with --corpus stdlib the first that many docstrings "
                             "(default all)")
    parser.add_argument("--corpus", choices=common.CORPORA, default="synthetic",
                        help="the seeded Zipf corpus (default) or real text: this Python's stdlib docstrings")
    parser.add_argument("--queries", type=int, default=30, help="distinct queries per class (<= 100)")
    parser.add_argument("--repeats", type=int, default=2, help="timed passes after the warm-up pass")
    parser.add_argument("--slow-queries", type=int, default=10,
                        help="queries per class for DuckDB (the first ones of the set; default 10)")
    parser.add_argument("--systems", default=",".join(SEARCHERS), help="comma-separated subset of " + ",".join(SEARCHERS))
    parser.add_argument("--skip-build", action="store_true", help="reuse bench-data/ builds and their numbers")
    parser.add_argument("--no-docs", action="store_true",
                        help="write neither docs/benchmarks.md nor docs/img/ (plots go to bench-data/)")
    parser.add_argument("--from-json", type=Path,
                        help="only rewrite the report and plots from a results file of an earlier run")
    parser.add_argument("--child", choices=("bm25s", "lance", "duckdb"), help=argparse.SUPPRESS)
    parser.add_argument("--child-query", choices=SEARCHERS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    n_rows, corpus_name = args.rows, args.corpus
    if args.from_json:
        _publish(json.loads(args.from_json.read_text()), args.no_docs)
        return
    if args.child:
        child = {"bm25s": _child_bm25s, "lance": _child_lance, "duckdb": _child_duckdb}[args.child]
        common.emit_result(child(n_rows, corpus_name))
        return
    if args.child_query:
        common.emit_result(_child_query(args.child_query, n_rows, corpus_name, args.queries, args.slow_queries))
        return
    if not 1 <= args.queries <= 100:
        parser.error("--queries must be in 1..100 (the frequent band has 100 words)")
    wanted = [x.strip() for x in args.systems.split(",") if x.strip()]
    if "ours" not in wanted or any(x not in SEARCHERS for x in wanted):
        parser.error(f"--systems must include ours and name only {', '.join(SEARCHERS)}")

    env = {"date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"), "machine": bc._machine(),
           "load_start": common.loadavg(), "versions": _versions(), "duckdb_note": _duckdb_note()}
    unavailable = {x: err for x in wanted if (err := _probe(x))}
    for x, err in unavailable.items():
        _log(f"{x} cannot run here: {err}")
    systems = [x for x in wanted if x not in unavailable]
    env["corpus"], env["rows_arg"] = corpus_name, args.rows
    n_rows = bc.prepare_corpus(corpus_name, n_rows)
    paths = _paths(n_rows, corpus_name)
    env["parquet_mb"] = paths["parquet"].stat().st_size / 1e6
    if corpus_name != "synthetic":
        import corpus

        env["corpus_info"] = corpus.stdlib_terms(paths["terms"])[1]

    builds = [x for x in BUILDS if x in systems]
    saved = json.loads(paths["json"].read_text()) if args.skip_build and paths["json"].exists() else None
    if args.skip_build:
        if saved is None or any(x not in saved["build"] or not paths[x].exists() for x in builds):
            parser.error(f"--skip-build: {paths['json']} or a build under bench-data/ is missing; run without it")
        build = {x: saved["build"][x] for x in builds}
        env["other_build"] = f"{saved['meta']['other_build']} (at the reused builds)"
        env["other_build_cores"] = saved["meta"].get("other_build_cores", 0.0)
        env["build_note"] = (f"*Build numbers reused from the run of {saved['meta']['date']} (load average then "
                             f"{saved['meta']['load_start']}); this run used `--skip-build`.*")
    else:
        with bc._OtherCpu() as other:
            build = {x: _normalize_build(x, _build(x, n_rows, corpus_name)) for x in builds}
        env["other_build"], env["other_build_cores"] = other.describe(), other.other_s / other.wall_s

    _log("query memory, one fresh subprocess per system ...")
    with bc._OtherCpu() as other:
        qmem = {x: common.run_child(__file__, ["--child-query", x, "--rows", str(n_rows), "--corpus", corpus_name,
                                               "--queries", str(args.queries), "--slow-queries",
                                               str(args.slow_queries)], _log)
                for x in systems}
    env["other_qmem"], env["other_qmem_cores"] = other.describe(), other.other_s / other.wall_s

    env["load_search"] = common.loadavg()
    env["git"] = common.git_state()
    _log("latency run ...")
    with bc._OtherCpu() as other:
        search = _search_bench(n_rows, corpus_name, systems, args.queries, args.repeats, args.slow_queries)
    env["other_search"], env["other_search_cores"] = other.describe(), other.other_s / other.wall_s
    env["load_end"] = common.loadavg()

    env |= {"rows": n_rows, "queries": args.queries, "repeats": args.repeats, "slow_queries": args.slow_queries,
            "skip_build": args.skip_build, "labels": LABEL, "classes": {c: bc.CLASS_DOC[c][0] for c in CLASSES},
            "ks": list(KS)}
    results = {"meta": env, "unavailable": unavailable, "build": build, "query_memory": qmem, "search": search}
    paths["json"].write_text(json.dumps(results, indent=1))
    _log(f"wrote {paths['json']}")
    _publish(results, args.no_docs)


def _publish(results: dict, no_docs: bool) -> None:
    """Print the section; write the plots, and unless ``no_docs`` the docs section and docs/img/."""
    import plot_peers

    meta = results["meta"]
    section = _report(results)
    print(section)
    if no_docs:
        out = DATA / f"peers-img-{bc.stem(meta['rows'], common.corpus_of(meta))}"
        plot_peers.plot(results, out)
        _log(f"plots in {out}")
        return
    IMG.mkdir(parents=True, exist_ok=True)
    (IMG / f"{common.peers_prefix(meta)}.json").write_text(json.dumps(results, indent=1))
    plot_peers.plot(results, IMG)
    title = SECTIONS[common.corpus_of(meta)]
    bc.write_docs_section(title, section)
    _log(f"wrote section {title!r} to {bc.DOCS} and plots to {IMG}")


if __name__ == "__main__":
    main()
