"""Block-max pruning changes speed only: results with pruning on and off are
bit-identical (docs/design.md: "Order, top-k and paging"; "Segment sets and ranked parts"), on
corpora big enough to skip blocks, tie-heavy ones included, with deletes, include_row_ids and
several segments."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.query import Boolean, Match

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def corpus(seed: int, n: int, vocab: int, zipf: bool) -> pa.Table:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) if zipf else np.ones(vocab)
    p /= p.sum()
    lengths = rng.integers(1, 12, n)
    words = np.array(WORDS[:vocab])[rng.choice(vocab, lengths.sum(), p=p)]
    bodies, at = [], 0
    for length in lengths:
        bodies.append(" ".join(words[at : at + length]))
        at += length
    return pa.table({"body": bodies})


def results(t: fts.Table, query, k: int, include=None) -> list[tuple[int, str]]:
    r = t.search(query, limit=k, include_row_ids=include, columns=[])
    return list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist())))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    vocab=st.integers(1, 8),
    zipf=st.booleans(),
    k=st.sampled_from([1, 3, 10, 50]),
    terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    boost=st.sampled_from([1.0, 0.5, 3.0]),
    segments=st.integers(1, 3),
    delete_every=st.sampled_from([0, 7]),
    use_include=st.booleans(),
)
def test_pruning_is_invisible(seed, vocab, zipf, k, terms, boost, segments, delete_every, use_include):
    n = 3000
    db = fts.connect()
    t = db.create_table("docs", corpus(seed, n, vocab, zipf))
    if segments == 1:
        t.create_index("body")
    else:
        cuts = np.linspace(0, n, segments + 1).astype(int)
        for lo, hi in zip(cuts, cuts[1:]):
            t.build_segment("body", (int(lo), int(hi) - 1))
    if delete_every:
        t.delete(f"_rowid % {delete_every} = 0")
    include = np.arange(0, n, 3) if use_include else None
    query = Match("body", " ".join(terms), boost=boost)
    pruned = results(t, query, k, include)
    db.settings.set("fts.pruning", False)
    assert pruned == results(t, query, k, include)


def shaped(shape: str, terms: list[str], boost: float):
    """The conjunctive shapes the kernels answer, over ``terms`` (at least two)."""
    first, rest = Match("body", terms[0], boost=boost), [Match("body", t) for t in terms[1:]]
    if shape == "and":
        return Match("body", " ".join(terms), operator="and", boost=boost)
    if shape == "must_should":
        return Boolean(must=(first,), should=tuple(rest))
    return Boolean(must=(first,), must_not=tuple(rest))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    vocab=st.integers(2, 8),
    k=st.sampled_from([1, 3, 10, 50]),
    terms=st.lists(st.sampled_from(WORDS), min_size=2, max_size=3, unique=True),
    shape=st.sampled_from(["and", "must_should", "must_not"]),
    boost=st.sampled_from([1.0, 0.5, 3.0]),
    segments=st.integers(2, 4),
    delete_every=st.sampled_from([0, 7]),
)
def test_pruning_is_invisible_on_conjunctions_over_several_segments(
    seed, vocab, k, terms, shape, boost, segments, delete_every
):
    """Later segments start from the k-th score earlier ones returned (their rows win
    ties): the results are those of exhaustive scoring and of one segment."""
    n = 3000
    db = fts.connect()
    t = db.create_table("docs", corpus(seed, n, vocab, zipf=True))
    cuts = np.linspace(0, n, segments + 1).astype(int)
    for lo, hi in zip(cuts, cuts[1:]):
        t.build_segment("body", (int(lo), int(hi) - 1))
    if delete_every:
        t.delete(f"_rowid % {delete_every} = 0")
    query = shaped(shape, terms, boost)
    pruned = results(t, query, k)
    db.settings.set("fts.pruning", False)
    assert pruned == results(t, query, k)
    t.optimize()  # one segment
    db.settings.set("fts.pruning", True)
    assert pruned == results(t, query, k)


def test_pruning_skips_blocks_on_a_frequent_term():
    # Ten short rows dense in "a" come first; every later row has one "a" in a long text,
    # so once they fill the top 10 no later block can compete.
    bodies = ["a a a a"] * 10 + [f"a {' '.join(['z'] * (20 + i % 7))}" for i in range(20_000)]
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": bodies}))
    t.create_index("body")
    plan, _ = t.plan(Match("body", "a"), limit=10)
    list(plan.execute())
    search = plan.children()[0]
    assert search.metrics.values.get("blocks_skipped", 0) > 0
    assert search.metrics.values["postings_scored"] < 20_000
