"""Merging segments: a merge that packs its output batch by batch writes exactly the
arrays that packing the whole unpacked merge writes, whatever the batch size, and both
hold the postings of the segments merged."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datafusion_fts.analysis import AnalyzerConfig, analyzer_for
from datafusion_fts.index.building import builder
from datafusion_fts.index.building.builder import build_segment, merge_segments
from datafusion_fts.index.segment import Segment

WORDS = ["a", "b", "c", "d", "e", "f", "g"]


def _segments(docs: list[str], cuts: list[int], positions: bool) -> list[Segment]:
    """One segment per piece of ``docs`` between ``cuts`` (row ids are positions)."""
    analyzer = analyzer_for(AnalyzerConfig())
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(docs))), len(docs)]
    out = []
    for i, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        stream = analyzer.analyze(pa.array(docs[lo:hi]))
        ids = np.arange(lo, hi, dtype=np.int64)
        out.append(build_segment(f"s{i}", lo, hi - 1, (lo, hi - 1), ids, stream, positions).pack())
    return out


def _arrays(seg: Segment) -> dict[str, object]:
    return {name: (a.to_pylist() if name == "terms" else a.to_numpy(zero_copy_only=False).tolist())
            for name, a in seg.to_arrays().items()}


docs = st.lists(st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(docs, st.lists(st.integers(0, 60), max_size=4), st.booleans(), st.integers(1, 40))
def test_a_merge_packed_in_batches_writes_what_packing_the_whole_merge_writes(docs, cuts, positions, batch):
    segments = _segments(docs, cuts, positions)
    whole = merge_segments("m", segments, packed=False)
    assert not whole.packed
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(builder, "MERGE_BATCH_POSTINGS", batch)
        batched = merge_segments("m", segments)
    assert batched.packed and batched.meta == whole.meta
    assert _arrays(batched) == _arrays(whole.pack())
    one = _segments(docs, [], positions)[0]  # the same rows built as one segment
    if one.meta.n_postings:  # (with none, whether positions are kept cannot be told)
        assert _arrays(batched) == _arrays(one)
