"""Sorted term dictionaries (index/sorted_terms.py): the union of several dictionaries is
the sorted union with exact maps — on unicode and empty inputs."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.index.sorted_terms import union_terms

WORDS = st.text(st.sampled_from("abé東ΣzZ09_"), min_size=0, max_size=5)


def sorted_terms(words: list[str]) -> pa.Array:
    terms = pc.unique(pa.array(words, pa.large_string()))
    return terms.take(pc.sort_indices(terms))  # the order segments are built in


@given(st.lists(st.lists(WORDS, max_size=12), min_size=1, max_size=4))
def test_union_is_the_sorted_union_with_exact_maps(groups):
    inputs = [sorted_terms(g) for g in groups]
    union, maps = union_terms(inputs)
    assert union.equals(sorted_terms([w for g in groups for w in g]))
    for terms, mapping in zip(inputs, maps):
        assert union.take(pa.array(mapping, pa.int64())).equals(terms)
