"""Dictionary segmenters against the default bigrams (issue 42): known-item MRR@10 on Debian's
manual pages (``benchmarks/manpages.py``: each page's NAME description is a query whose one
right answer is the page), index build time and size, per segmenter and collection.

Every run indexes the same page texts through the public API (``create_index(segmenter=...)``)
and asks each description as an OR of its terms (``Match``), top 10.

Usage::

    python benchmarks/bench_segmenters.py                      # ja and zh_CN, every segmenter
    python benchmarks/bench_segmenters.py --collections ja --segmenters bigrams sudachi
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import manpages
import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.query import Match

K = 10
SEGMENTERS = ("bigrams", "none", "jieba", "icu", "sudachi", "lindera")


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(collection: str, segmenter: str, cache: Path) -> dict[str, float]:
    """MRR@10, recall@10, build seconds, index MB and query ms of one segmenter on one collection."""
    rows = manpages.load_collection(collection, cache).to_pylist()
    queries = [(row["description"], i) for i, row in enumerate(rows) if row["known_item"]]
    with tempfile.TemporaryDirectory(prefix="bench-seg-") as work:
        db = fts.connect(Path(work))
        table = db.create_table("pages", pa.table({"body": [row["body"] for row in rows]}))
        start = time.perf_counter()
        table.create_index("body", segmenter=segmenter)
        build_s = time.perf_counter() - start
        size = dir_bytes(Path(work) / "index")
        reciprocal, found = 0.0, 0
        start = time.perf_counter()
        for text, row in queries:
            ranked = table.search(Match("body", text), limit=K, columns=[]).column("_rowid").to_pylist()
            if row in ranked:
                found += 1
                reciprocal += 1.0 / (ranked.index(row) + 1)
        query_s = time.perf_counter() - start
    return {"documents": len(rows), "queries": len(queries), "mrr": reciprocal / len(queries),
            "recall": found / len(queries), "build_s": build_s, "mb": size / 1e6,
            "query_ms": 1000 * query_s / len(queries)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", nargs="+", default=["ja", "zh_CN"])
    parser.add_argument("--segmenters", nargs="+", default=list(SEGMENTERS))
    parser.add_argument("--cache", type=Path, default=manpages.CACHE)
    args = parser.parse_args(argv)
    manpages.download(args.cache)
    print("| collection | segmenter | documents | queries | MRR@10 | recall@10 | build s | index MB | query ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for collection in args.collections:
        for segmenter in args.segmenters:
            r = measure(collection, segmenter, args.cache)
            print(f"| {collection} | {segmenter} | {r['documents']} | {r['queries']} | {r['mrr']:.3f} | "
                  f"{r['recall']:.3f} | {r['build_s']:.2f} | {r['mb']:.1f} | {r['query_ms']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
