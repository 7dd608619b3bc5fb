"""The marks of found rows (udfs/row_marks.py): looked up by row id in a dense table or by
binary search, the same truth and score for every row id, NULL for a NULL one."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.udfs.row_marks import _Found


@given(st.sets(st.integers(0, 5_000), max_size=60), st.lists(st.one_of(st.none(), st.integers(-3, 5_100)), max_size=80))
def test_dense_and_sparse_look_ups_agree_with_the_found_rows(found_ids, asked):
    ids = np.array(sorted(found_ids), np.int64)
    rng = np.random.default_rng(len(ids))
    order = rng.permutation(len(ids))  # (a search's result comes in rank order)
    table = pa.table({"_rowid": ids[order], "_score": (ids * 0.5 + 1.0)[order]})
    rowids = pa.array(asked, pa.int64())
    want_hit = [None if r is None else r in found_ids for r in asked]
    want_score = [r * 0.5 + 1.0 if r is not None and r in found_ids else None for r in asked]
    for dense in (True, False):
        marks = _Found(table, dense)
        assert marks.hit(rowids).to_pylist() == want_hit
        assert marks.score(rowids).to_pylist() == want_score
