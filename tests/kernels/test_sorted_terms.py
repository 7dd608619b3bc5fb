"""Sorted term dictionary kernels (kernels/sorted_terms.pyx): the lookup finds every term
and nothing else, the merge is the sorted union with exact maps, and sorting gives the
byte order — on unicode, NUL bytes, long shared prefixes and empty inputs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given
from hypothesis import strategies as st

from datafusion_fts.index.sorted_terms import term_buffers
from datafusion_fts.kernels.sorted_terms import find_term, merge_terms, sort_terms

WORDS = st.text(st.sampled_from("abé東ΣzZ09_"), min_size=0, max_size=5)
# (long shared prefixes sort on several 8-byte words; NUL bytes tie with the zero padding)
LONG_WORDS = st.builds(
    lambda prefix, tail: prefix + tail,
    st.sampled_from(["", "prefix_shared_", "prefix_shared_prefix_shared_"]),
    st.text(st.sampled_from("ab\x00é東z"), min_size=0, max_size=30),
)


def sorted_terms(words: list[str]) -> pa.Array:
    terms = pc.unique(pa.array(words, pa.large_string()))
    return terms.take(pc.sort_indices(terms))  # the order segments are built in


@given(st.lists(WORDS, max_size=20), st.lists(WORDS, max_size=5))
def test_find_term_finds_each_term_and_nothing_else(words, probes):
    terms = sorted_terms(words)
    data, offsets = term_buffers(terms.slice(0))  # (a slice keeps its offset)
    for i, term in enumerate(terms.to_pylist()):
        assert find_term(data, offsets, term.encode()) == i
    for probe in probes:
        found = find_term(data, offsets, probe.encode())
        assert found == (terms.to_pylist().index(probe) if probe in words else -1)


def test_sliced_arrays_keep_their_offset():
    terms = sorted_terms(["a", "b", "c", "d"]).slice(1, 2)
    data, offsets = term_buffers(terms)
    assert find_term(data, offsets, b"c") == 1
    assert find_term(data, offsets, b"a") == -1


@given(st.lists(LONG_WORDS, max_size=20), st.lists(LONG_WORDS, max_size=20))
def test_merge_is_the_sorted_union_with_exact_maps(a_words, b_words):
    a, b = sorted_terms(a_words), sorted_terms(b_words)
    data, offsets, map_a, map_b = merge_terms(*term_buffers(a), *term_buffers(b))
    union = pa.Array.from_buffers(
        pa.large_string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )
    assert union.equals(sorted_terms(a_words + b_words))
    assert union.take(pa.array(map_a, pa.int64())).equals(a)
    assert union.take(pa.array(map_b, pa.int64())).equals(b)


@given(st.lists(LONG_WORDS, max_size=200, unique=True))
def test_sort_terms_is_the_byte_order(words):
    terms = pa.array(words, pa.large_string())
    data, offsets = term_buffers(terms)
    order = sort_terms(data, offsets, np.arange(len(words), dtype=np.int64))
    assert [words[i] for i in order] == sorted(words, key=lambda w: w.encode())
    assert terms.take(pa.array(order, pa.int64())).equals(sorted_terms(words))


@given(st.lists(LONG_WORDS, min_size=1, max_size=40), st.data())
def test_sort_terms_keeps_the_order_of_equal_terms(words, data):
    """A subset of indices, repeats allowed: a stable sort by the terms' bytes."""
    items = np.array(data.draw(st.lists(st.integers(0, len(words) - 1), max_size=60)), np.int64)
    order = sort_terms(*term_buffers(pa.array(words, pa.large_string())), items)
    assert order.tolist() == sorted(items.tolist(), key=lambda i: words[i].encode())
