"""A table of rows laid out on one of the tiers a search reads (docs/design.md: "Storage"):
for tests that hold an answer to be the same whichever tier holds the rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import strategies as st

import datafusion_fts as fts

# indexed: one segment; deleted: rows deleted inside it; fresh: fresh rows beside it; tail:
# no index (every row unindexed) with fresh rows; segments: several segments over several
# fragments, with deletions; optimized: fragments rewritten without their deleted rows.
TIERS = ("indexed", "deleted", "fresh", "tail", "segments", "optimized")
WORDS = ("alpha", "beta", "gamma", "delta")


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    """Up to 40 rows: ``body`` (1-4 of ``WORDS``), ``cat`` (text, NULL and empty among
    them) and ``year`` (int32, NULLs): columns to search and to count by."""
    n = draw(st.integers(1, 40))
    words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
    return pa.table({
        "body": pa.array(draw(st.lists(words, min_size=n, max_size=n))),
        "cat": pa.array(draw(st.lists(st.none() | st.sampled_from(["news", "blog", "wiki", ""]), min_size=n,
                                      max_size=n)), pa.string()),
        "year": pa.array(draw(st.lists(st.none() | st.integers(1990, 1995), min_size=n, max_size=n)), pa.int32()),
    })


def table_on(db: fts.Database, table: pa.Table, tiers: str, column: str = "body") -> fts.Table:
    """``table`` as the managed table ``docs`` of ``db``, laid out on ``tiers``."""
    t = db.create_table("docs", table)
    if tiers != "tail":
        t.create_index(column)
    if tiers in ("deleted", "optimized"):
        t.delete_rows(np.arange(0, table.num_rows, 3, dtype=np.int64))
    if tiers in ("fresh", "tail"):
        t.insert(table.slice(0, table.num_rows // 2))
    elif tiers == "segments":
        t.bulk_insert(table.slice(table.num_rows // 2))
        t.delete_rows(np.arange(1, table.num_rows, 4, dtype=np.int64))
    if tiers in ("segments", "optimized"):
        t.optimize()
    return t
