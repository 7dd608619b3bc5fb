"""Where the known-item MRR of issue 42 comes from: one BM25 (ours: k1 = 1.2, b = 0.75,
Lucene's idf, a query term counted once) over several analyses of Debian's manual pages,
so the analyses are compared with nothing else changed.

A diagnosis beside ``bench_cjk.py`` (which runs each system as it is): it showed the
default analyzer at 0.630 on ja against Lance's ngram(2,3) at 0.651. Here the default
analyzer's terms give the same 0.630, and raw 2-3-grams of the whole lowercased text
(spaces and Latin included) give Lance's 0.651; the rows between say which grams carry
the difference.

Usage::

    python benchmarks/cjk_ablation.py ja      # or zh_CN, zh_TW, en (manpages.download() first)
"""

from __future__ import annotations

import argparse
import collections
import math
import re
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import manpages

from datafusion_fts.analysis.analyzer import analyzer_for, make_analyzer_config

K = 10
CJK_RUN = re.compile(r"[\u3040-\u30FF\u3400-\u9FFF\uF900-\uFAFF\uFF66-\uFF9F]+")
LATIN_WORD = re.compile(r"[a-z0-9]+")


def raw_grams(text: str) -> list[str]:
    """2- and 3-grams of the whole lowercased text, spaces and punctuation included."""
    t = text.lower()
    return [t[i : i + n] for n in (2, 3) for i in range(len(t) - n + 1)]


def cjk_trigrams(text: str) -> list[str]:
    """Trigrams of each CJK run (after width folding), marked apart from other terms."""
    runs = CJK_RUN.findall(unicodedata.normalize("NFKC", text))
    return ["3" + r[i : i + 3] for r in runs for i in range(len(r) - 2)]


def latin_grams(text: str) -> list[str]:
    """2- and 3-grams of each Latin word (letters and digits), marked apart."""
    words = LATIN_WORD.findall(text.lower())
    return ["L" + w[i : i + n] for w in words for n in (2, 3) for i in range(len(w) - n + 1)]


def mrr(docs: list[list[str]], queries: list[tuple[list[str], int]]) -> float:
    """MRR@10 of ``queries`` (terms, the relevant document) over ``docs`` (their terms)
    under BM25 (k1 = 1.2, b = 0.75; a query term counted once; a tie ranks the earlier
    document first)."""
    k1, b = 1.2, 0.75
    lengths = np.array([len(d) for d in docs], dtype=np.float64)
    norm = k1 * (1 - b + b * lengths / lengths.mean())
    postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    grouped: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for row, terms in enumerate(docs):
        for term, tf in collections.Counter(terms).items():
            grouped[term].append((row, tf))
    for term, pairs in grouped.items():
        rows, tfs = zip(*pairs)
        postings[term] = (np.array(rows), np.array(tfs, dtype=np.float64))
    n_docs, total = len(docs), 0.0
    for terms, relevant in queries:
        scores = np.zeros(n_docs)
        for term in dict.fromkeys(terms):
            if term in postings:
                rows, tf = postings[term]
                idf = math.log(1 + (n_docs - len(rows) + 0.5) / (len(rows) + 0.5))
                scores[rows] += idf * tf * (k1 + 1) / (tf + norm[rows])
        top = np.argsort(-scores, kind="stable")[:K]
        hit = np.flatnonzero(top == relevant)
        if len(hit) and scores[relevant] > 0:
            total += 1 / (hit[0] + 1)
    return total / len(queries)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", nargs="?", default="ja")
    args = parser.parse_args(argv)
    table = manpages.load_collection(args.collection).to_pylist()
    bodies = [row["body"] for row in table]
    queries = [(row["description"], i) for i, row in enumerate(table) if row["known_item"]]
    ours = analyzer_for(make_analyzer_config()).terms
    analyses: dict[str, Callable[[str], list[str]]] = {
        "the default analyzer (bigrams of CJK runs, words of other scripts)": ours,
        "raw 2-3-grams of the whole text": raw_grams,
        "the default analyzer + CJK trigrams": lambda t: ours(t) + cjk_trigrams(t),
        "the default analyzer + 2-3-grams of Latin words": lambda t: ours(t) + latin_grams(t),
        "the default analyzer + both": lambda t: ours(t) + cjk_trigrams(t) + latin_grams(t),
    }
    print(f"{args.collection}: {len(queries)} queries over {len(bodies)} pages, MRR@{K}")
    print("| analysis | MRR@10 |\n| --- | ---: |")
    for name, analyze in analyses.items():
        score = mrr([analyze(b) for b in bodies], [(analyze(q), i) for q, i in queries])
        print(f"| {name} | {score:.3f} |")


if __name__ == "__main__":
    main()
