"""The sloppy phrase kernel counts what the reference's independent reading of Lucene's
scan counts (docs/design.md: "Compound queries"), many rows per call, repeated terms
included, and so does the ordered one, with gaps in the phrase too; the positions the
sloppy one records for highlighting are those of counted matches."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from reference import phrase_tf as reference_in_order
from reference import sloppy_phrase_tf as reference_tf

from datafusion_fts.kernels.merge import NO_MARKS, later_occurrences, phrase_tf, sloppy_phrase_tf

ROWS = st.lists(st.lists(st.sampled_from("abc"), max_size=10), min_size=1, max_size=6)
TERMS = st.lists(st.sampled_from("abc"), min_size=1, max_size=4)


def kernel_input(rows: list[list[str]], terms: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, ends, positions) as the evaluator lays them out: one block of positions
    per distinct term (rows in order), shared by the term's repeats in the phrase."""
    positions: list[int] = []
    block: dict[str, tuple[list[int], list[int]]] = {}
    for term in dict.fromkeys(terms):
        lo, hi = [], []
        for tokens in rows:
            lo.append(len(positions))
            positions.extend(p for p, token in enumerate(tokens) if token == term)
            hi.append(len(positions))
        block[term] = (lo, hi)
    starts = np.array([block[t][0] for t in terms], dtype=np.int64)
    ends = np.array([block[t][1] for t in terms], dtype=np.int64)
    return starts, ends, np.array(positions, dtype=np.int64)


@given(ROWS, TERMS, st.integers(0, 5))
def test_the_kernel_counts_what_the_reference_counts(rows, terms, slop):
    starts, ends, positions = kernel_input(rows, terms)
    got = sloppy_phrase_tf(starts, ends, positions, slop, later_occurrences(terms), NO_MARKS, np.arange(len(terms)))
    assert got.tolist() == [reference_tf(tokens, terms, slop) for tokens in rows]


@given(ROWS, TERMS, st.integers(0, 5))
def test_recorded_positions_belong_to_matching_rows(rows, terms, slop):
    starts, ends, positions = kernel_input(rows, terms)
    marks = np.zeros(len(positions), dtype=np.bool_)
    tf = sloppy_phrase_tf(starts, ends, positions, slop, later_occurrences(terms), marks.view(np.uint8), np.arange(len(terms)))
    assert tf.tolist() == sloppy_phrase_tf(starts, ends, positions, slop, later_occurrences(terms), NO_MARKS, np.arange(len(terms))).tolist()
    for c, tokens in enumerate(rows):
        marked: dict[str, set[int]] = {}
        for k, term in enumerate(terms):
            at = range(starts[k, c], ends[k, c])
            marked[term] = {int(positions[i]) for i in at if marks[i]}
        if tf[c] == 0:
            assert not any(marked.values())
            continue
        # every term of the phrase is marked as often as it occurs in it, at its own tokens
        for term in terms:
            assert len(marked[term]) >= terms.count(term)
            assert all(tokens[p] == term for p in marked[term])


def test_later_occurrences():
    assert later_occurrences(("a", "b", "a", "a")).tolist() == [2, -1, 3, -1]
    assert later_occurrences(("a",)).tolist() == [-1]


GAPS = st.lists(st.integers(1, 3), min_size=3, max_size=3)


def _offsets(terms: list[str], gaps: list[int]) -> list[int]:
    """Offsets of a phrase whose terms lie ``gaps`` apart (a gap over 1: the place the
    tokenizer leaves between two runs of grams)."""
    return [0] + np.cumsum(gaps[: len(terms) - 1]).tolist()


@given(ROWS, TERMS, st.integers(0, 5), GAPS)
def test_with_gaps_in_the_phrase_the_kernels_count_what_the_reference_counts(rows, terms, slop, gaps):
    starts, ends, positions = kernel_input(rows, terms)
    offsets = _offsets(terms, gaps)
    places = np.array(offsets, dtype=np.int64)
    got = sloppy_phrase_tf(starts, ends, positions, slop, later_occurrences(terms), NO_MARKS, places)
    assert got.tolist() == [reference_tf(tokens, terms, slop, offsets) for tokens in rows]
    in_order = phrase_tf(starts, ends, positions, slop, places)
    assert in_order.tolist() == [reference_in_order(tokens, terms, slop, offsets) for tokens in rows]
