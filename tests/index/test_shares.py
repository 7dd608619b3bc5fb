"""The split of ranked parts into worker shares (no Ray needed): every row of every column
is ranked exactly once, by the driver or by one share, and the split follows the rules
of index/shares.py."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.index.shares import partition, runs_rows, share_sets
from datafusion_fts.index.term_statistics import StatsRequest, collect, merge
from datafusion_fts.storage.stores.shared import SharedLocation


def ranked_ids(segment_set) -> np.ndarray:
    parts = [np.arange(p.segment.meta.base + p.lo, p.segment.meta.base + p.hi) for p in segment_set.parts]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 60))
    db = fts.connect()
    words = ["a", "b", "c a", "b b c", ""]
    t = db.create_table("docs", pa.table({
        "x": [words[draw(st.integers(0, 4))] for _ in range(n)],
        "y": [words[draw(st.integers(0, 4))] for _ in range(n)],
    }))
    for column in ("x", "y"):
        cuts = sorted({c for c in draw(st.lists(st.integers(1, max(1, n - 1)), max_size=3)) if c < n})
        bounds = [0, *cuts, n]
        for lo, hi in zip(bounds, bounds[1:]):
            if lo < hi:  # (a cut at n, possible when n == 1, makes an empty range)
                t.build_segment(column, (max(0, lo - draw(st.integers(0, 2))), hi - 1))
    deleted = draw(st.lists(st.integers(0, n - 1), max_size=n // 3, unique=True))
    if deleted:
        t.delete(f"_rowid IN ({', '.join(map(str, deleted))})")
    tail = draw(st.integers(0, 5))
    if tail:
        t.insert(pa.table({"x": ["a b"] * tail, "y": ["c"] * tail}))
    return t, draw(st.integers(1, 5))


@given(tables())
def test_every_row_is_ranked_once_and_statistics_add_up(case):
    t, n_shares = case
    snap = t.snapshot()
    db = t.db
    sets = {c: db.hybrid_segment_set(snap, c)[0] for c in ("x", "y")}
    persisted = {c: frozenset(s.id for s in snap.meta.indexes[c].segments) for c in sets}
    split = partition(sets, persisted, n_shares, snap.deleted, SharedLocation("unused"), "token")
    assert len(split.shares) <= n_shares
    loaded = [share_sets(s, db.segment) for s in split.shares]
    for c, whole in sets.items():
        pieces = [ranked_ids(split.local[c])] + [ranked_ids(s[c]) for s in loaded]
        together = np.concatenate(pieces)
        assert sorted(together.tolist()) == ranked_ids(whole).tolist()  # once each
        for s in loaded:  # shares hold persisted segments only
            assert all(p.segment.meta.id in persisted[c] for p in s[c].parts)
    # A share's rows are the same for every column: its runs.
    for share, s in zip(split.shares, loaded):
        rows = set(runs_rows(share.runs, share.deleted).tolist())
        for c in sets:
            live = set(ranked_ids(s[c]).tolist()) - set(snap.deleted.tolist())
            assert live <= rows
    request = StatsRequest({"x": ("a", "b", "zz"), "y": ("c",)}, ())
    replies = [collect(s, request) for s in loaded] + [collect(split.local, request)]
    found = merge(replies, request, {c: (s.k1, s.b) for c, s in sets.items()})
    for c, whole in sets.items():
        assert found.columns[c] == whole.column_stats
    for (c, term), df in found.df.items():
        assert df == sets[c].df(term)
