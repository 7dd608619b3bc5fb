"""Block metadata (kernels/invert.pyx block_metadata): each block's impact points
dominate every posting of the block, so the pruning bound computed from them is never
below a score in the block, whatever the statistics."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from datafusion_fts.index.bm25 import ColumnStats, block_bound_factors, norms
from datafusion_fts.kernels.invert import BLOCK_IMPACTS, BLOCK_SIZE, IMPACT_MAX, block_metadata


@st.composite
def postings(draw):
    """Terms' postings over rows of random lengths: ascending distinct rows per term."""
    n_rows = draw(st.integers(1, 600))
    dl = np.array(draw(st.lists(st.integers(0, 2**20), min_size=n_rows, max_size=n_rows)), dtype=np.uint32)
    offsets, rows, tfs = [0], [], []
    for _ in range(draw(st.integers(1, 4))):
        mine = sorted(draw(st.sets(st.integers(0, n_rows - 1), max_size=n_rows)))
        rows += mine
        tfs += draw(st.lists(st.integers(1, 2**32 - 1) | st.integers(1, 4), min_size=len(mine), max_size=len(mine)))
        offsets.append(len(rows))
    return (np.array(offsets, np.int64), np.array(rows, np.uint32), np.array(tfs, np.uint32), dl)


@settings(max_examples=200, deadline=None)
@given(postings(), st.floats(0.0, 3.0), st.floats(0.0, 1.0), st.integers(1, 10**9), st.integers(1, 10**6))
def test_every_posting_is_dominated_by_an_impact_point_of_its_block(data, k1, b, total, n_docs):
    offsets, rows, tfs, dl = data
    block_offsets, impact_tf, impact_dl, last_row = block_metadata(offsets, rows, tfs, dl, BLOCK_SIZE)
    assert len(impact_tf) == len(impact_dl) == BLOCK_IMPACTS * len(last_row) == BLOCK_IMPACTS * block_offsets[-1]
    stats = ColumnStats(n_docs, total, k1, b)
    bounds = block_bound_factors(impact_tf, impact_dl, BLOCK_IMPACTS, stats)
    for t in range(len(offsets) - 1):
        for j, start in enumerate(range(offsets[t], offsets[t + 1], BLOCK_SIZE)):
            block = block_offsets[t] + j
            end = min(start + BLOCK_SIZE, offsets[t + 1])
            points = slice(block * BLOCK_IMPACTS, (block + 1) * BLOCK_IMPACTS)
            point_tf = np.where(impact_tf[points] == IMPACT_MAX, np.inf, impact_tf[points])  # (any tf from it up)
            for i in range(start, end):
                dominated = (point_tf >= tfs[i]) & (impact_dl[points] <= dl[rows[i]])
                assert dominated.any()
            tf = tfs[start:end].astype(np.float64)
            scores = tf / (tf + norms(dl[rows[start:end]], stats))
            assert scores.max() <= bounds[block]
            assert last_row[block] == rows[end - 1]


def test_one_point_blocks_of_earlier_segments_bound_as_before():
    stats = ColumnStats(100, 5000)
    tf, dl = np.array([3, 1], np.uint32), np.array([40, 10], np.uint32)
    assert np.array_equal(block_bound_factors(tf, dl, 1, stats), tf / (tf + norms(dl, stats)) * (1 + 1e-9))


def test_points_are_16_bits_and_saturate_safely():
    """A tf or length past 16 bits is kept as IMPACT_MAX: the tf then bounds by BM25's
    limit (a factor of 1), the length only lowers (a looser bound); a uint32 point of the
    same value (a segment written before) is its own value."""
    offsets = np.array([0, 2], np.int64)
    rows = np.array([0, 1], np.uint32)
    tfs = np.array([70_000, 3], np.uint32)
    dl = np.array([100_000, 90_000], np.uint32)
    _, impact_tf, impact_dl, _ = block_metadata(offsets, rows, tfs, dl, BLOCK_SIZE)
    assert impact_tf.dtype == impact_dl.dtype == np.uint16
    assert impact_tf.max() == IMPACT_MAX and impact_dl.max() == IMPACT_MAX
    stats = ColumnStats(2, 190_000)
    assert block_bound_factors(impact_tf, impact_dl, BLOCK_IMPACTS, stats)[0] == 1 + 1e-9
    wide = impact_tf.astype(np.uint32)
    assert block_bound_factors(wide, impact_dl.astype(np.uint32), BLOCK_IMPACTS, stats)[0] < 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 70_000), st.integers(0, 70_000)), min_size=4, max_size=64),
       st.sampled_from([1, BLOCK_IMPACTS]), st.sampled_from([np.uint16, np.uint32]),
       st.floats(0.0, 3.0), st.floats(0.0, 1.0), st.integers(0, 10**6), st.integers(1, 10**9))
def test_compiled_block_bounds_equal_the_array_formula(points, impacts, dtype, k1, b, n_docs, total):
    """The compiled pass gives the array expression's values bit for bit (NaN where a
    0/0 point makes one)."""
    points = points[: len(points) // impacts * impacts]
    tf = np.minimum([p[0] for p in points], np.iinfo(dtype).max).astype(dtype)
    dl = np.minimum([p[1] for p in points], np.iinfo(dtype).max).astype(dtype)
    stats = ColumnStats(n_docs, total, k1, b)
    f = tf.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = f / (f + norms(dl, stats)) * (1 + 1e-9)
    if dtype == np.uint16:
        expected[tf == IMPACT_MAX] = 1 + 1e-9
    expected = expected if impacts == 1 else expected.reshape(-1, impacts).max(axis=1)
    np.testing.assert_array_equal(block_bound_factors(tf, dl, impacts, stats), expected)
