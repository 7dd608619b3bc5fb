"""The BM25 formula's one canonical form (docs/design.md: "Statistics and BM25")."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.index.bm25 import ColumnStats, idf, term_weights


@given(
    n_docs=st.integers(1, 10**12),
    data=st.data(),
    k1=st.floats(0.0, 10.0),
)
def test_a_querys_weights_are_its_terms_idf_times_k1_plus_one(n_docs, data, k1):
    """``term_weights`` writes idf in line: bit for bit the same numbers."""
    dfs = data.draw(st.lists(st.integers(0, n_docs), max_size=8))
    stats = ColumnStats(n_docs, 10 * n_docs, k1, 0.75)
    assert [repr(w) for w in term_weights(stats, dfs)] == [repr(idf(n_docs, df) * (k1 + 1.0)) for df in dfs]
