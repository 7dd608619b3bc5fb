"""The share of a table's rows up to which its n-gram index is read (planner/plan_substring.py):
the setting's for short texts, more for longer ones, as measured; the settings 0 and 1
keep their meaning (never, always)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.index.bm25 import ColumnStats
from datafusion_fts.planner.plan_substring import WIDEST, candidate_share


@given(st.floats(0, 1), st.integers(0, 10_000), st.integers(0, 10_000))
def test_the_share_grows_with_the_text_a_row_holds_and_stays_a_share(share: float, a: int, b: int) -> None:
    narrow, wide = sorted((a, b))
    low, high = (candidate_share(share, ColumnStats(1000, grams * 1000)) for grams in (narrow, wide))
    assert share <= low <= high <= min(1.0, WIDEST * share)
    assert candidate_share(0.0, ColumnStats(1000, wide * 1000)) == 0.0
    assert candidate_share(1.0, ColumnStats(1000, wide * 1000)) == 1.0
    assert candidate_share(share, ColumnStats(0, 0)) == share  # (no text indexed yet)


@pytest.mark.parametrize("width, plan", [(12, "scan"), (1200, "n-gram index")])
def test_a_pattern_some_rows_hold_is_read_from_the_index_where_rows_hold_long_texts(width: int, plan: str) -> None:
    """Of 1,000 rows, 40 hold the needle (4 %): past the 2 % of short texts, within what
    rows of ~1,200 characters take."""
    db = fts.connect()
    rnd = random.Random(width)
    words = ["".join(rnd.choice("abcdefghijklmopqrstuvwxyz") for _ in range(6)) for _ in range(3000)]

    def text() -> str:  # (~width characters of varied words: about as many distinct trigrams)
        return " ".join(rnd.choice(words) for _ in range(width // 7))

    body = [f"{'needle ' if i % 25 == 0 else ''}{i} {text()}" for i in range(1000)]
    db.create_table("t", pa.table({"id": list(range(1000)), "body": body}))
    db.sql("CREATE NGRAM INDEX ON t (body)")
    lines = db.sql("EXPLAIN SELECT id FROM t WHERE body LIKE '%needle%'").to_pylist()[0]["plan"]
    assert lines.startswith(f"t.body: {plan}"), lines
    assert len(db.sql("SELECT id FROM t WHERE body LIKE '%needle%'").to_pylist()) == 40
