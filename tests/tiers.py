"""A table of rows laid out on one of the tiers a search reads (docs/design.md: "Storage"):
for tests that hold an answer to be the same whichever tier holds the rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

import datafusion_fts as fts

# indexed: one segment; deleted: rows deleted inside it; fresh: fresh rows beside it; tail:
# no index (every row unindexed) with fresh rows; segments: several segments over several
# fragments, with deletions; optimized: fragments rewritten without their deleted rows.
TIERS = ("indexed", "deleted", "fresh", "tail", "segments", "optimized")


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
