"""Sorted term dictionaries (index/sorted_terms.py): the merge is the sorted union with
exact maps, the lookup finds every term and nothing else — on unicode and empty inputs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.index.sorted_terms import find_term, sort_terms, term_buffers, union_terms

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


@given(st.lists(WORDS, max_size=20), st.lists(WORDS, max_size=5))
def test_find_term_finds_each_term_and_nothing_else(words, probes):
    terms = sorted_terms(words)
    data, offsets = term_buffers(terms.slice(0))  # (a slice keeps its offset)
    for i, term in enumerate(terms.to_pylist()):
        assert find_term(data, offsets, np.frombuffer(term.encode(), np.uint8)) == i
    for probe in probes:
        found = find_term(data, offsets, np.frombuffer(probe.encode(), np.uint8))
        assert found == (terms.to_pylist().index(probe) if probe in words else -1)


def test_sliced_arrays_keep_their_offset():
    terms = sorted_terms(["a", "b", "c", "d"]).slice(1, 2)
    data, offsets = term_buffers(terms)
    assert find_term(data, offsets, np.frombuffer(b"c", np.uint8)) == 1
    assert find_term(data, offsets, np.frombuffer(b"a", np.uint8)) == -1


@given(st.lists(st.text(st.sampled_from("ab\x00é東z"), min_size=0, max_size=30), max_size=40, unique=True))
def test_sort_terms_is_the_byte_order(words):
    terms = pa.array(words, pa.large_string())
    data, offsets = term_buffers(terms)
    order = sort_terms(data, offsets, np.arange(len(words), dtype=np.int64))
    assert [words[i] for i in order] == sorted(words, key=lambda w: w.encode())
    assert terms.take(pa.array(order, pa.int64())).equals(sorted_terms(words))
