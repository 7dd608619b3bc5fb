"""Counts and facets over matches (issue 44): ``db.sql`` against Tantivy, in one run.

The seeded Zipf corpus of ``benchmarks/corpus.py`` (``bench-data/corpus-<n>.parquet``: id,
title, body) with three columns a search page counts by, made from the row's id with a
seeded generator: ``cat`` (20 values, Zipf-like shares), ``year`` (1990..2025) and ``price``
(float64). Ours: one table of those six columns with a full-text index on ``body``, built
in ``bench-data/facets-<n>/`` (reused when present). Tantivy 0.27 (tantivy-py): ``body``
with its default tokenizer (the same split as ours on this ASCII corpus), ``cat`` a raw
text fast field, ``year`` an integer fast field, ``price`` a float fast field
(``bench-data/tantivy-facets-<n>/``).

Queries: the corpus's terms matching 5-15 % of rows (one term each), ORs of two of them
for ``count`` and ``by cat``, and rare terms (0.02-0.06 % of a 20,000-row sample's rows)
for ``count``, ``by cat``, ``by year`` and ``top 10 + total`` (the counts of both systems
are checked equal, and their counts by ``cat``). Per query, medians of ``--repeats`` passes, the two systems
interleaved statement by statement:

=========================  ===========================================  ==========================================
statement                  ours (``db.sql(...).to_arrow_table()``)      Tantivy
=========================  ===========================================  ==========================================
count                      ``SELECT count(*) FROM docs WHERE MATCH``    ``search(q, 10, count=True)`` (top 10 + count)
by cat, top 10             ``GROUP BY cat ORDER BY n DESC LIMIT 10``    terms aggregation on ``cat``, size 10
by year, count + avg       ``GROUP BY year``, count(*), avg(price)      terms on ``year`` (size 40) + avg ``price``
top 10 + total             ``count(*) OVER ()`` beside the top 10       ``search(q, 10, count=True)``
top 10 alone               ``ORDER BY score() DESC LIMIT 10``           ``search(q, 10, count=False)``
=========================  ===========================================  ==========================================

Usage::

    python benchmarks/bench_facets.py                 # 1,000,000 rows, written to docs/benchmarks.md
    python benchmarks/bench_facets.py --rows 100000 --no-docs
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_core as bc  # noqa: E402  (paths, corpus, machine, docs section)
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from common import git_state, loadavg  # noqa: E402

import datafusion_fts as fts  # noqa: E402

SECTION = "## Counts and facets (issue 44)"
CATS = 20
YEARS = (1990, 2025)


def facet_columns(ids: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """``cat``, ``year`` and ``price`` of each row, from its id and ``seed`` alone."""
    rng = np.random.default_rng(seed)
    shares = 1.0 / np.arange(1, CATS + 1)
    table_cat = rng.choice(CATS, size=len(ids), p=shares / shares.sum())
    return {
        "cat": np.array([f"cat{c:02d}" for c in range(CATS)])[table_cat],
        "year": rng.integers(YEARS[0], YEARS[1] + 1, size=len(ids)).astype(np.int64),
        "price": np.round(rng.gamma(2.0, 20.0, size=len(ids)), 2),
    }


def _corpus(n_rows: int) -> pa.Table:
    bc.prepare_corpus("synthetic", n_rows)
    table = pq.read_table(bc._paths(n_rows)["parquet"], columns=["id", "title", "body"])
    extra = facet_columns(table.column("id").to_numpy(), bc.SEED)
    for name, values in extra.items():
        table = table.append_column(name, pa.array(values))
    return table


def build_ours(table: pa.Table, path: Path, log: Callable[[str], None]) -> fts.Database:
    if not (path / "manifest.json").exists():
        shutil.rmtree(path, ignore_errors=True)
        start = time.perf_counter()
        db = fts.connect(path)
        db.create_table("docs", table).create_index("body")
        log(f"ours: built {path} in {time.perf_counter() - start:.1f} s")
        del db
    return fts.connect(path, read_only=True)


def build_tantivy(table: pa.Table, path: Path, log: Callable[[str], None]):
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True, fast=True)
    builder.add_text_field("body", stored=False)
    builder.add_text_field("cat", stored=False, fast=True, tokenizer_name="raw")
    builder.add_integer_field("year", stored=False, indexed=True, fast=True)
    builder.add_float_field("price", stored=False, indexed=False, fast=True)
    schema = builder.build()
    if not (path / "meta.json").exists():
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        start = time.perf_counter()
        index = tantivy.Index(schema, path=str(path))
        writer = index.writer()
        for batch in table.select(["id", "body", "cat", "year", "price"]).to_batches(65_536):
            for row in batch.to_pylist():
                writer.add_document(tantivy.Document(**row))
        writer.commit()
        writer.wait_merging_threads()
        log(f"tantivy: built {path} in {time.perf_counter() - start:.1f} s")
    index = tantivy.Index.open(str(path))
    index.reload()
    return index


def frequent_terms(table: pa.Table, n: int, lo: float = 0.05, hi: float = 0.15) -> list[tuple[str, int]]:
    """``n`` terms each found in between ``lo`` and ``hi`` of a 20,000-row sample's rows."""
    from collections import Counter

    sample = table.column("body").slice(0, 20_000).to_pylist()
    seen: Counter[str] = Counter()
    for body in sample:
        seen.update(set(body.split()))
    fits = sorted(t for t, c in seen.items() if lo * len(sample) <= c <= hi * len(sample))
    step = max(1, len(fits) // n)
    return [(t, seen[t]) for t in fits[::step][:n]]


def statements(term: str) -> dict[str, str]:
    where = f"FROM docs WHERE MATCH(body, '{term}')"
    return {
        "count": f"SELECT count(*) AS n {where}",
        "by cat, top 10": f"SELECT cat, count(*) AS n {where} GROUP BY cat ORDER BY n DESC, cat LIMIT 10",
        "by year, count + avg": f"SELECT year, count(*) AS n, avg(price) AS p {where} GROUP BY year ORDER BY year",
        "top 10 + total": f"SELECT id, score() AS s, count(*) OVER () AS total {where} ORDER BY s DESC LIMIT 10",
        "top 10 alone": f"SELECT id, score() AS s {where} ORDER BY s DESC LIMIT 10",
    }


def tantivy_calls(index, term: str) -> dict[str, Callable[[], object]]:
    searcher = index.searcher()
    query = index.parse_query(term, ["body"])
    by_cat = {"cats": {"terms": {"field": "cat", "size": 10}}}
    by_year = {"years": {"terms": {"field": "year", "size": 40}, "aggs": {"p": {"avg": {"field": "price"}}}}}
    return {
        "count": lambda: searcher.search(query, 10, count=True).count,
        "by cat, top 10": lambda: searcher.aggregate(query, by_cat),
        "by year, count + avg": lambda: searcher.aggregate(query, by_year),
        "top 10 + total": lambda: searcher.search(query, 10, count=True).count,
        "top 10 alone": lambda: searcher.search(query, 10, count=False).hits,
    }


def check(db: fts.Database, index, term: str) -> int:
    """Both systems' counts of ``term``'s matches and their counts by cat, checked equal."""
    ours = db.sql(statements(term)["count"]).to_pylist()[0]["n"]
    theirs = tantivy_calls(index, term)["count"]()
    assert ours == theirs, (term, ours, theirs)
    cats = {r["cat"]: r["n"] for r in db.sql(statements(term)["by cat, top 10"]).to_pylist()}
    buckets = tantivy_calls(index, term)["by cat, top 10"]()["cats"]["buckets"]
    assert cats == {b["key"]: b["doc_count"] for b in buckets}, term
    return ours


# Statements also measured for queries of two terms (an OR: either term's rows), and for
# rare terms (0.02-0.06 % of a sample's rows).
PAIRED = ("count", "by cat, top 10")
RARE = ("count", "by cat, top 10", "by year, count + avg", "top 10 + total")


def measure(db: fts.Database, index, terms: list[str], repeats: int, names: tuple[str, ...] | None = None,
            label: str = "") -> dict[str, dict[str, float]]:
    """Per statement (``names``: those only), the medians over queries of each query's
    median, ms, per system; each statement's name followed by ``label``."""
    samples: dict[tuple[str, str, str], list[float]] = {}
    for _ in range(repeats + 1):  # (the first pass warms up)
        for term in terms:
            ours, theirs = statements(term), tantivy_calls(index, term)
            for name in names or ours:
                for system, call in (("ours", lambda: db.sql(ours[name]).to_arrow_table()), ("tantivy", theirs[name])):
                    start = time.perf_counter()
                    call()
                    samples.setdefault((name, system, term), []).append(1e3 * (time.perf_counter() - start))
    out: dict[str, dict[str, float]] = {}
    for (name, system, term), times in samples.items():
        out.setdefault(name + label, {}).setdefault(system, []).append(statistics.median(times[1:]))  # type: ignore[union-attr]
    return {name: {system: statistics.median(v) for system, v in by.items()} for name, by in out.items()}  # type: ignore[arg-type]


def report(n_rows: int, matches: dict[str, int], results: dict[str, dict[str, float]], repeats: int,
           paired: dict[str, int], rare: dict[str, int]) -> str:
    share = [100 * m / n_rows for m in matches.values()]
    both = [100 * m / n_rows for m in paired.values()]
    few = [100 * m / n_rows for m in rare.values()]
    lines = [
        SECTION,
        "",
        f"Run {_dt.date.today().isoformat()} at {git_state()} (`python benchmarks/bench_facets.py`), "
        f"{n_rows:,} rows, {len(matches)} one-term queries matching {min(share):.1f}-{max(share):.1f} % of rows "
        f"and {len(paired)} ORs of two of them matching {min(both):.1f}-{max(both):.1f} %, "
        f"{len(rare)} rare terms matching {min(few):.3f}-{max(few):.3f} % (measured last) "
        f"(both systems' counts checked equal, and their counts by `cat`), medians of {repeats} passes, "
        f"interleaved; load average {loadavg()}. Ours through `db.sql(...).to_arrow_table()`; "
        "Tantivy 0.27 through tantivy-py (see the script's docstring for each call).",
        "",
        "| statement | ours, ms | Tantivy, ms | ours / Tantivy (lower is better) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, by in results.items():
        lines.append(f"| {name} | {by['ours']:.2f} | {by['tantivy']:.2f} | {by['ours'] / by['tantivy']:.1f}x |")
    alone = results["top 10 alone"]["ours"]
    lines += ["", f"Ours, top 10 with its total / top 10 alone: {results['top 10 + total']['ours'] / alone:.1f}x."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="1000000")
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args(argv)
    n_rows = bc._parse_rows(args.rows)
    log = bc._log
    table = _corpus(n_rows)
    db = build_ours(table, bc.DATA / f"facets-{n_rows}", log)
    index = build_tantivy(table, bc.DATA / f"tantivy-facets-{n_rows}", log)
    terms = [t for t, _ in frequent_terms(table, args.queries)]
    rare_terms = [t for t, _ in frequent_terms(table, args.queries, 0.0002, 0.0006)]
    del table
    matches = {t: check(db, index, t) for t in terms}
    pairs = [f"{a} {b}" for a, b in zip(terms, terms[1:])]
    paired = {p: check(db, index, p) for p in pairs}
    rare = {t: check(db, index, t) for t in rare_terms}
    log(f"queries: {json.dumps(matches)}; two terms: {json.dumps(paired)}; rare: {json.dumps(rare)}")
    results = measure(db, index, terms, args.repeats)
    results.update(measure(db, index, pairs, args.repeats, PAIRED, ", two terms (OR)"))
    results.update(measure(db, index, rare_terms, args.repeats, RARE, ", rare term"))
    section = report(n_rows, matches, results, args.repeats, paired, rare)
    print(section)
    if not args.no_docs:
        bc.write_docs_section(SECTION, section)


if __name__ == "__main__":
    main()
