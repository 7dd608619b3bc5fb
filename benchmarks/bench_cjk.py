"""Known-item relevance on text without spaces (issue 42): Debian's manual pages in Japanese,
Chinese and English (``benchmarks/manpages.py``), ours against SQLite FTS5, Tantivy and Lance.

Each page's NAME description is a query; its one right answer is the page (whose text has no
NAME section). Every system indexes the same page texts and answers the same description
strings; the report gives MRR@10 and recall@10 (share of queries with the page in the top 10),
the index build time and the index's size on disk.

Systems:

* ours, default analyzer (Han/Kana/Hangul runs as bigrams), the query as an OR of its terms
  and with ``operator="and"``; ours with ``segmenter="none"`` (the analysis before issue 42);
* SQLite FTS5 with the ``trigram`` tokenizer, ranked by ``bm25()``: the description as typed
  (one phrase: a substring match), as an OR of its pieces (split at spaces and punctuation;
  pieces under 3 characters can match nothing and are left out), and as an OR of its trigrams;
* Tantivy with an ngram(2, 3) tokenizer over the whole text (tantivy-py offers no n-gram filter
  after a word splitter): through its QueryParser (each space-separated word becomes a phrase
  of n-grams at one position, i.e. all of them), and as an OR of the query's n-grams;
* Lance's inverted index with ``base_tokenizer="ngram"`` (2..3) and ``"icu"`` (ICU's dictionary
  word segmentation), queried with ``full_text_query`` (OR); ``jieba/default`` and
  ``lindera/ipadic`` need language models downloaded beforehand and are reported as failing.

Usage::

    python benchmarks/bench_cjk.py                  # every collection, written to docs/benchmarks.md
    python benchmarks/bench_cjk.py --collections en --no-docs
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

os.environ.setdefault("LANCE_LOG", "error")

import bench_core
import manpages
import pyarrow as pa
from common import git_state

import datafusion_fts as fts
from datafusion_fts.errors import FtsError
from datafusion_fts.query import Match

K = 10
SECTION = "## Every language: known-item relevance on Debian's manual pages (issue 42)"
# A system answers a query string with the rows (page indices) of its top K, best first.
Search = Callable[[str], list[int]]


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class Built:
    """A system's index over one collection: its searches by name, build seconds and bytes."""

    def __init__(self, searches: dict[str, Search], build_s: float, size: int) -> None:
        self.searches, self.build_s, self.size = searches, build_s, size


def build_ours(bodies: list[str], work: Path, segmenter: str | None) -> Built:
    db = fts.connect(work / "ours")
    table = db.create_table("pages", pa.table({"body": bodies}))
    options = {} if segmenter is None else {"segmenter": segmenter}
    start = time.perf_counter()
    table.create_index("body", **options)
    build_s = time.perf_counter() - start

    def search(operator: str) -> Search:
        return lambda q: table.search(Match("body", q, operator=operator), limit=K,
                                      columns=[]).column("_rowid").to_pylist()

    return Built({"or": search("or"), "and": search("and")}, build_s, dir_bytes(work / "ours" / "index"))


def _fts5_string(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _pieces(text: str) -> list[str]:
    return [p for p in re.split(r"[\W_]+", text) if len(p) >= 3]


def build_sqlite(bodies: list[str], work: Path) -> Built:
    path = work / "fts5.db"
    con = sqlite3.connect(path)
    start = time.perf_counter()
    # Contentless: the file holds the index only, as the other systems' sizes do.
    con.execute("CREATE VIRTUAL TABLE pages USING fts5(body, tokenize='trigram', content='')")
    con.executemany("INSERT INTO pages(rowid, body) VALUES (?, ?)", enumerate(bodies))
    con.commit()
    build_s = time.perf_counter() - start

    def run(expression: str) -> list[int]:
        if not expression:
            return []
        rows = con.execute("SELECT rowid FROM pages WHERE pages MATCH ? ORDER BY bm25(pages) LIMIT ?",
                           (expression, K))
        return [r[0] for r in rows]

    def trigrams(text: str) -> str:
        grams = {p[i:i + 3] for p in _pieces(text) for i in range(len(p) - 2)}
        return " OR ".join(_fts5_string(g) for g in sorted(grams))

    return Built({
        "phrase": lambda q: run(_fts5_string(q)),
        "or pieces": lambda q: run(" OR ".join(_fts5_string(p) for p in _pieces(q))),
        "or trigrams": lambda q: run(trigrams(q)),
    }, build_s, path.stat().st_size)


def build_tantivy(bodies: list[str], work: Path) -> Built:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("row", stored=True, indexed=False)
    builder.add_text_field("body", stored=False, tokenizer_name="ngram23", index_option="position")
    schema = builder.build()
    (work / "tantivy").mkdir()
    index = tantivy.Index(schema, str(work / "tantivy"))
    analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(2, 3, False))
                .filter(tantivy.Filter.lowercase()).build())
    index.register_tokenizer("ngram23", analyzer)
    start = time.perf_counter()
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for row, body in enumerate(bodies):
        writer.add_document(tantivy.Document(row=row, body=body))
    writer.commit()
    writer.wait_merging_threads()
    build_s = time.perf_counter() - start
    index.reload()
    searcher = index.searcher()

    def run(query: tantivy.Query) -> list[int]:
        return [searcher.doc(address)["row"][0] for _, address in searcher.search(query, K).hits]

    def parsed(text: str) -> list[int]:
        query, _errors = index.parse_query_lenient(text, ["body"])
        return run(query)

    def grams(text: str) -> list[int]:
        terms = sorted(set(analyzer.analyze(text)))
        clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t)) for t in terms]
        return run(tantivy.Query.boolean_query(clauses)) if clauses else []

    return Built({"QueryParser": parsed, "or n-grams": grams}, build_s, dir_bytes(work / "tantivy"))


def build_lance(bodies: list[str], work: Path, tokenizer: str, **options: object) -> Built:
    import lance

    path = work / f"lance-{tokenizer.replace('/', '-')}"
    dataset = lance.write_dataset(pa.table({"row": list(range(len(bodies))), "body": bodies}), path)
    start = time.perf_counter()
    dataset.create_scalar_index("body", index_type="INVERTED", base_tokenizer=tokenizer, **options)
    build_s = time.perf_counter() - start

    def search(text: str) -> list[int]:
        found = dataset.to_table(full_text_query=text, limit=K, columns=["row", "_score"])
        return found.column("row").to_pylist()

    return Built({"or": search}, build_s, dir_bytes(path / "_indices"))


# (system, builder): each builder gets the bodies and a fresh directory.
SYSTEMS: list[tuple[str, Callable[[list[str], Path], Built]]] = [
    ("ours", lambda b, w: build_ours(b, w, None)),
    ("ours segmenter=none", lambda b, w: build_ours(b, w, "none")),
    ("SQLite FTS5 trigram", build_sqlite),
    ("Tantivy ngram(2,3)", build_tantivy),
    ("Lance ngram(2,3)", lambda b, w: build_lance(b, w, "ngram", min_ngram_length=2, max_ngram_length=3)),
    ("Lance icu", lambda b, w: build_lance(b, w, "icu")),
    ("Lance jieba/default", lambda b, w: build_lance(b, w, "jieba/default")),
    ("Lance lindera/ipadic", lambda b, w: build_lance(b, w, "lindera/ipadic")),
]
OURS = "ours or"  # the row "ours / best anchor" compares
NOT_ANCHORS = ("ours",)


def measure(collection: str, log: Callable[[str], None]) -> dict[str, object]:
    """Every system's MRR@10 and recall@10 on one collection (failures kept as their message)."""
    table = manpages.load_collection(collection).to_pylist()
    bodies = [row["body"] for row in table]
    queries = [(row["description"], i) for i, row in enumerate(table) if row["known_item"]]
    runs: dict[str, dict[str, object]] = {}
    for system, build in SYSTEMS:
        with tempfile.TemporaryDirectory(prefix="bench-cjk-") as work:
            try:
                built = build(bodies, Path(work))
            except (ValueError, FtsError) as error:  # an option or model missing: a result
                runs[system] = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"}
                log(f"{collection} {system}: {runs[system]['error']}")
                continue
            for name, search in built.searches.items():
                reciprocal, found = 0.0, 0
                start = time.perf_counter()
                for text, row in queries:
                    ranked = search(text)
                    if row in ranked:
                        found += 1
                        reciprocal += 1.0 / (ranked.index(row) + 1)
                elapsed = time.perf_counter() - start
                label = f"{system} {name}"
                runs[label] = {"system": system, "mrr": reciprocal / len(queries), "recall": found / len(queries),
                               "build_s": built.build_s, "bytes": built.size,
                               "query_ms": 1000 * elapsed / len(queries)}
                log(f"{collection} {label}: MRR@10 {runs[label]['mrr']:.3f}, "
                    f"recall@10 {runs[label]['recall']:.3f}, build {built.build_s:.1f} s, "
                    f"{built.size / 1e6:.1f} MB")
    return {"documents": len(bodies), "queries": len(queries), "runs": runs}


def report(results: dict[str, dict[str, object]], versions: dict[str, str], seconds: float) -> str:
    labels = list(dict.fromkeys(label for r in results.values() for label in r["runs"]))
    ok = [label for label in labels if all("mrr" in r["runs"].get(label, {}) for r in results.values())]
    failed = {label: next(r["runs"][label]["error"] for r in results.values()
                          if "error" in r["runs"].get(label, {}))
              for label in labels if label not in ok}
    lines = [SECTION, ""]
    add = lines.append
    add(f"Run {_dt.date.today().isoformat()} on {platform.node() or 'this machine'} "
        f"({os.cpu_count()} cores, Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}, tantivy {metadata.version('tantivy')}, pylance "
        f"{metadata.version('pylance')}), commit {git_state()}, in {seconds:.0f} s: "
        "`python benchmarks/bench_cjk.py`.")
    add("")
    add("Collections (`benchmarks/manpages.py`): " + ", ".join(f"{p} {v}" for p, v in versions.items())
        + ". A page is a document (its text without the NAME section); its NAME description is a query "
        "when non-empty and no other page of the collection has it; the one right answer is the page. "
        "`zh_TW` is manpages-zh's traditional-character conversion of `zh_CN`, measured on its own.")
    add("")
    add("The suite runs the same measure on a 250-page sample of each language "
        "(`tests/data/manpages/`, `tests/analysis/test_known_item.py`, about 1 s).")
    add("")
    add("MRR@10 (recall@10 in parentheses):")
    add("")
    header = ["collection", "queries", "documents", *ok, "ours / best anchor"]
    add("| " + " | ".join(header) + " |")
    add("|" + "---|" * len(header))
    for collection, r in results.items():
        runs = r["runs"]
        anchors = [label for label in ok if not label.startswith(NOT_ANCHORS)]
        best = max(anchors, key=lambda label: runs[label]["mrr"], default=None)
        ratio = (f"{runs[OURS]['mrr'] / runs[best]['mrr']:.2f} ({best})"
                 if best and OURS in ok and runs[best]["mrr"] else "-")
        cells = [f"{runs[label]['mrr']:.3f} ({runs[label]['recall']:.2f})" for label in ok]
        add(f"| {collection} | {r['queries']} | {r['documents']} | " + " | ".join(cells) + f" | {ratio} |")
    add("")
    add("Index build time, index size on disk, and mean time of a query (the first search of "
        "the system, one query at a time through Python):")
    add("")
    first = next(iter(results.values()))["runs"]
    by_system: dict[str, str] = {}  # system -> its first label (one build serves all its searches)
    for label in ok:
        by_system.setdefault(first[label]["system"], label)
    systems = list(by_system)
    add("| collection | " + " | ".join(systems) + " |")
    add("|---|" + "---|" * len(systems))
    for collection, r in results.items():
        cells = [f"{run['build_s']:.1f} s, {run['bytes'] / 1e6:.1f} MB, {run['query_ms']:.1f} ms"
                 for run in (r["runs"][label] for label in by_system.values())]
        add(f"| {collection} | " + " | ".join(cells) + " |")
    add("")
    for label, error in failed.items():
        add(f"- {label} failed: `{error}`")
    if failed:
        add("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", default=list(manpages.COLLECTIONS),
                        choices=list(manpages.COLLECTIONS))
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    versions = manpages.download()
    with tempfile.TemporaryDirectory(prefix="bench-cjk-") as work:
        build_ours(["warm up the first build's imports"], Path(work), None)  # (not timed)
    start = time.perf_counter()
    results = {c: measure(c, lambda m: print(m, flush=True)) for c in args.collections}
    text = report(results, versions, time.perf_counter() - start)
    print(text)
    if not args.no_docs:
        bench_core.write_docs_section(SECTION, text)


if __name__ == "__main__":
    main()
