"""The corpus, query shapes and table layout the Ray tests share."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

import datafusion_fts as fts
from datafusion_fts.query import Boolean, Match, MultiMatch, Phrase, Prefix


def corpus(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = np.array(["alpha", "beta", "gamma", "delta", "alphabet", "alpine", "beta2", "zeta"])
    return pa.table({
        "title": [" ".join(rng.choice(words, rng.integers(1, 4))) for _ in range(n)],
        "body": [" ".join(rng.choice(words, rng.integers(0, 12))) for _ in range(n)],
    })


QUERIES = [
    Match("body", "alpha beta"),
    Match("body", "alpha gamma", operator="and", boost=1.7),
    Match("body", "alpah", fuzziness=2, max_expansions=2),
    Prefix("body", "alp", max_expansions=2),
    Phrase("body", "alpha beta", slop=1),
    Phrase("body", "beta alpha", slop=2, in_order=True),
    Phrase("body", "alpha be", slop=2, prefix=True, max_expansions=2),
    MultiMatch("alpha zeta", ("title", "body"), boosts=(2.0, 1.0)),
    Boolean(must=[Match("body", "gamma")], should=[Match("title", "alpha")], must_not=[Match("title", "zeta")]),
    Boolean(must_not=[Match("body", "alpha")]),
]

PARAMS = (
    {"limit": 10, "offset": 0, "include_row_ids": None},
    {"limit": None, "offset": 0, "include_row_ids": None},
    {"limit": 7, "offset": 5, "include_row_ids": list(range(0, 2050, 3))},
    {"limit": 5, "offset": 0, "include_row_ids": [1, 2, 2040]},
)


def layered_table(db: fts.Database) -> fts.Table:
    """2,000 rows: body in three segments (one overlapping), title in one, deletions,
    an unindexed committed tail and fresh rows."""
    t = db.create_table("docs", pa.concat_tables([corpus(2000), corpus(30, seed=1)]))
    # Rows 2000-2029 stay a committed tail no segment holds (inserted rows would be indexed).
    for lo, hi in ((0, 899), (850, 1499), (1500, 1999)):
        t.build_segment("body", (lo, hi), positions=True)
    t.build_segment("title", (0, 1999))
    t.delete("_rowid IN (3, 4, 860, 1999)")
    t.insert(corpus(20, seed=2))  # fresh rows
    return t
