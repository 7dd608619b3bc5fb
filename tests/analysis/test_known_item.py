"""Relevance on text without spaces (issue 42): known-item search over a sample of Debian's
manual pages (tests/data/manpages/README.md). Each page's NAME description is a query whose one
right answer is the page; MRR@10 is measured through the public API, index and search.

The default analyzer cuts Han, Kana and Hangul runs into bigrams; ``segmenter="none"``
keeps the old analysis (a run of letters is one token, so a Japanese or Chinese sentence is
one term that no query matches). Japanese and Chinese must rank far better by default, and
English, which has no such runs, must rank exactly as before.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

import pyarrow as pa
import pytest

import datafusion_fts as fts
from datafusion_fts.query import Match

DATA = Path(__file__).resolve().parent.parent / "data" / "manpages"
K = 10
# MRR@10 of the default analyzer on the sample must reach these (measured with the bigrams of
# commit 1a1b936: ja 0.827, zh 0.787; segmenter="none": ja 0.391, zh 0.205, en 0.735 both).
FLOOR = {"ja": 0.80, "zh": 0.76}
# ... and beat the old analysis by at least this much.
MARGIN = 0.3


def load_pages(lang: str) -> list[dict[str, object]]:
    """The sample's pages of ``lang`` (``ja``, ``zh``, ``en``): id, description, known_item, body."""
    with gzip.open(DATA / f"{lang}.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


@cache
def mrr_at_10(lang: str, segmenter: str | None) -> float:
    """Mean reciprocal rank of each known item in the top 10 of its description's search
    (0 when it is not there), on an index built with ``segmenter`` (None: the default)."""
    pages = load_pages(lang)
    db = fts.connect()
    table = db.create_table("pages", pa.table({
        "id": [p["id"] for p in pages], "body": [p["body"] for p in pages],
    }))
    options = {} if segmenter is None else {"segmenter": segmenter}
    table.create_index("body", **options)
    total, queries = 0.0, 0
    for row, page in enumerate(pages):
        if not page["known_item"]:
            continue
        queries += 1
        hits = table.search(Match("body", page["description"]), limit=K, columns=[])
        ranked = hits.column("_rowid").to_pylist()
        if row in ranked:
            total += 1.0 / (ranked.index(row) + 1)
    return total / queries


@pytest.mark.parametrize("lang", ["ja", "zh"])
def test_cjk_ranks_the_page_high_and_better_than_runs(lang: str) -> None:
    default, runs = mrr_at_10(lang, None), mrr_at_10(lang, "none")
    assert default >= FLOOR[lang], f"{lang}: MRR@10 {default:.3f} < floor {FLOOR[lang]}"
    assert default >= runs + MARGIN, f"{lang}: MRR@10 {default:.3f}, segmenter='none' {runs:.3f}"


def test_english_ranks_as_before() -> None:
    default, runs = mrr_at_10("en", None), mrr_at_10("en", "none")
    assert default == pytest.approx(runs, abs=0.001), (default, runs)
