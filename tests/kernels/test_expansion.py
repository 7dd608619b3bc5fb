"""Fuzzy expansion's distance kernel (kernels/expansion.pyx) against the reference's
Levenshtein distance over code points, with its cut-off."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from reference import levenshtein

from datafusion_fts.kernels.expansion import levenshtein_within

CHARS = st.sampled_from("abcé東😀ß")


@given(st.lists(st.text(CHARS, max_size=8), max_size=20), st.text(CHARS, max_size=8),
       st.integers(0, 4))
def test_distances_within_the_cut_off_are_exact(terms, query, max_dist):
    encoded = [t.encode() for t in terms]
    data = np.frombuffer(b"".join(encoded), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded])]).astype(np.int64)
    got = levenshtein_within(data, offsets, np.array([ord(c) for c in query], np.int64), max_dist)
    want = [d if (d := levenshtein(query, t)) <= max_dist else -1 for t in terms]
    assert got.tolist() == want
