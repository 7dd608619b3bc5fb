"""The document-at-a-time kernels (disjunction, conjunction, exclusion) give exactly what
the general evaluator and the brute-force reference give: the same rows, bit-identical
scores, in the total order with ties (docs/design.md: "Statistics and BM25"; "Segment sets and
ranked parts"), with pruning on and off, on tie-heavy corpora long enough to fill and skip blocks,
with deletes, prefilters, overlapping segments and an unindexed tail, at k = 1 up to more than every
match."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from engine_tables import engine_table
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import RefTable, ref_search

import datafusion_fts as fts
from datafusion_fts.operators import indexed_search
from datafusion_fts.operators.base import SEARCH_SCHEMA
from datafusion_fts.operators.terms import term_topk
from datafusion_fts.operators.terms.term_slots import term_slots
from datafusion_fts.operators.terms.term_topk import ACCUMULATE_SLOTS
from datafusion_fts.query import Boolean, Boost, Match, Phrase

WORDS = ("a", "b", "c", "d", "e", "f")
ABSENT = "zz"
BOOSTS = (1.0, 1.0, 0.5, 3.0, -1.0, 0.0)


def bodies(seed: int, n: int, vocab: int, zipf: bool) -> list[str]:
    """``n`` rows of 1-11 words from the first ``vocab`` WORDS: few distinct rows, so
    scores tie often; with ``zipf`` the first words fill many blocks of 128."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) if zipf else np.ones(vocab)
    p /= p.sum()
    lengths = rng.integers(1, 12, n)
    words = np.array(WORDS[:vocab])[rng.choice(vocab, int(lengths.sum()), p=p)]
    out, at = [], 0
    for length in lengths:
        out.append(" ".join(words[at : at + length]))
        at += length
    return out


query_words = st.sampled_from(WORDS + (ABSENT,))


def one_term(draw) -> Match:
    return Match("body", draw(query_words), boost=draw(st.sampled_from(BOOSTS)))


@st.composite
def kernel_queries(draw):
    """A tree of a shape the kernels answer: a Match (or / and), a Boolean of one-term
    MUST / SHOULD clauses with MUST_NOT Matches, or a Boost of one term by another (and
    Boosts next to those shapes, which the evaluator answers)."""
    if draw(st.integers(0, 4)) == 0:
        negative = Match("body", draw(query_words), boost=draw(st.sampled_from((1.0, 1.0, 2.0))))
        return Boost(one_term(draw), negative, draw(st.sampled_from((0.5, 0.0, -1.0, 2.0, 1e-300))))
    if draw(st.booleans()):
        text = " ".join(draw(st.lists(query_words, min_size=1, max_size=4)))
        return Match("body", text, operator=draw(st.sampled_from(("or", "and"))), boost=draw(st.sampled_from(BOOSTS)))
    must = tuple(one_term(draw) for _ in range(draw(st.integers(0, 3))))
    should = tuple(one_term(draw) for _ in range(draw(st.integers(0 if must else 1, 3))))
    must_not = tuple(
        Match("body", " ".join(draw(st.lists(query_words, min_size=1, max_size=2))))
        for _ in range(draw(st.integers(0, 2)))
    )
    return Boolean(must=must, should=should, must_not=must_not)


@st.composite
def cases(draw):
    n = draw(st.integers(100, 1200))
    ref = RefTable(
        rows={i: {"body": text} for i, text in enumerate(
            bodies(draw(st.integers(0, 10_000)), n, draw(st.integers(1, len(WORDS))), draw(st.booleans()))
        )},
        columns=["body"],
    )
    if draw(st.booleans()):
        ref.deleted = set(range(draw(st.integers(0, 6)), n, draw(st.integers(2, 9))))
    queries = draw(st.lists(kernel_queries(), min_size=1, max_size=3))
    k = draw(st.sampled_from((1, 2, 3, 10, 57, 5000)))
    offset = draw(st.sampled_from((0, 0, 1, 7)))
    include = None
    kind = draw(st.integers(0, 3))
    if kind == 1:
        include = list(range(draw(st.integers(0, 4)), n, draw(st.integers(2, 5))))
    elif kind == 2:  # selective: a few rows
        include = sorted(draw(st.sets(st.integers(0, n + 5), max_size=6)))
    layout = draw(st.sampled_from(("indexed", "segments", "hybrid")))
    splits = sorted(draw(st.lists(st.integers(1, n - 1), min_size=1, max_size=3)))
    return ref, queries, k, offset, include, layout, splits


def hits(t: fts.Table, query, k: int, offset: int, include) -> list[tuple[int, str]]:
    r = t.search(query, limit=k, offset=offset, include_row_ids=include, columns=[])
    return list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist())))


def plan_hits(t: fts.Table, query, k: int, offset: int, include) -> list[tuple[int, str]]:
    """``hits`` by the physical plan (``search`` runs a prepared search where it can)."""
    plan, _ = t.plan(query, limit=k, offset=offset, include_row_ids=include)
    r = pa.Table.from_batches(list(plan.execute()), schema=SEARCH_SCHEMA)
    return list(zip(r.column(0).to_pylist(), map(repr, r.column(1).to_pylist())))


@settings(deadline=None)
@given(cases())
def test_kernels_match_evaluator_and_reference(case):
    ref, queries, k, offset, include, layout, splits = case
    t = engine_table(ref, layout, splits)
    for query in queries:
        expected = [(r, repr(s)) for r, s in ref_search(ref, query, limit=k, offset=offset, include_row_ids=include)]
        assert hits(t, query, k, offset, include) == expected
        assert plan_hits(t, query, k, offset, include) == expected
        assert_statistics_are_the_evaluators(t, query, k)
        t.db.settings.set("fts.pruning", False)
        assert hits(t, query, k, offset, include) == expected
        t.db.settings.set("fts.pruning", True)
        indexed_search.TERM_KERNELS = False
        try:
            assert hits(t, query, k, offset, include) == expected
        finally:
            indexed_search.TERM_KERNELS = True
        term_topk.ACCUMULATE_SLOTS = 1  # every disjunction accumulated a term at a time
        try:
            assert hits(t, query, k, offset, include) == expected
        finally:
            term_topk.ACCUMULATE_SLOTS = ACCUMULATE_SLOTS


@settings(deadline=None, max_examples=8)
@given(seed=st.integers(0, 10_000), n_terms=st.integers(ACCUMULATE_SLOTS, 300), data=st.data())
def test_a_wide_disjunction_is_accumulated_exactly(seed, n_terms, data):
    """Past ACCUMULATE_SLOTS terms a disjunction is accumulated (an OR of 10,000 terms took
    4 s by MaxScore): the same rows and scores as MaxScore, the evaluator and the reference,
    with excluded terms, deleted rows, a prefilter and several segments."""
    rng = np.random.default_rng(seed)
    vocab = [f"t{i}" for i in range(500)]
    n = 1000
    ref = RefTable(rows={i: {"body": " ".join(rng.choice(vocab[: rng.choice((20, 500))], rng.integers(1, 9)))}
                         for i in range(n)}, columns=["body"])
    ref.deleted = set(range(3, n, 17))
    terms = list(rng.choice(vocab + [ABSENT], n_terms))
    excluded = tuple(Match("body", w) for w in rng.choice(vocab, data.draw(st.integers(0, 3))))
    query = Boolean(should=tuple(Match("body", w, boost=float(rng.choice((1.0, 0.5, 2.0)))) for w in terms),
                    must_not=excluded)
    include = list(range(0, n, 3)) if data.draw(st.booleans()) else None
    t = engine_table(ref, data.draw(st.sampled_from(("indexed", "segments"))), [300, 700])
    k = data.draw(st.sampled_from((1, 10, 100, n)))
    expected = [(r, repr(s)) for r, s in ref_search(ref, query, limit=k, include_row_ids=include)]
    assert hits(t, query, k, 0, include) == expected
    term_topk.ACCUMULATE_SLOTS = n_terms + 1  # MaxScore
    try:
        assert hits(t, query, k, 0, include) == expected
    finally:
        term_topk.ACCUMULATE_SLOTS = ACCUMULATE_SLOTS


def assert_statistics_are_the_evaluators(t: fts.Table, query, k: int) -> None:
    """The statistics the kernels gathered with their term lookups (what EXPLAIN shows)
    are those the general evaluator computes for the bound query."""
    plan, _ = t.plan(query, limit=k)
    list(plan.execute())
    pending = [plan]
    while not isinstance(pending[0], indexed_search.IndexedSearch):
        pending += pending.pop(0).children()
    search = pending[0]
    again = indexed_search.IndexedSearch(search.bound, search.sets, None, search.all_rows, search.k)
    assert search.stats == again.stats


@settings(deadline=None)
@given(seed=st.integers(0, 10_000), vocab=st.integers(1, 4), data=st.data())
def test_top_k1_is_a_prefix_of_top_k2(seed, vocab, data):
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": bodies(seed, 900, vocab, True)}))
    t.create_index("body")
    query = data.draw(kernel_queries())
    full = hits(t, query, 900, 0, None)
    for k in (1, 2, 5, 10, 128, 129, 400):
        assert hits(t, query, k, 0, None) == full[:k]


@pytest.mark.parametrize("second", ["b", "b c"])  # like lengths: the lists step in line
def test_a_conjunction_finds_the_first_and_last_rows_of_every_part(second):
    """Rows 0, 4, 5 and 11 end or start a part (segments over [0, 4], [5, 11]) and only they
    hold both terms; matches past a part's last row are never its candidates."""
    words = ["a " + second if i in (0, 4, 5, 11) else ("a" if i % 2 else "b") for i in range(12)]
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": words}))
    t.build_segment("body", (0, 4))
    t.build_segment("body", (5, 11))
    query = Match("body", "a b", operator="and")
    assert sorted(r for r, _ in hits(t, query, 100, 0, None)) == [0, 4, 5, 11]
    assert sorted(r for r, _ in hits(t, query, 100, 0, [4, 5, 6])) == [4, 5]


def search_metrics(t: fts.Table, query, k: int = 10) -> dict:
    plan, _ = t.plan(query, limit=k)
    list(plan.execute())
    return plan.children()[0].metrics.values


@pytest.fixture(scope="module")
def skewed() -> fts.Table:
    """"a" in every row, "b" in every 1000th, "c" in every 3rd, "e" in the last 40 rows."""
    n = 20_000
    text = ["a" + (" b" if i % 1000 == 0 else "") + (" c" if i % 3 == 0 else "") + (" e" if i >= n - 40 else "")
            for i in range(n)]
    t = fts.connect().create_table("docs", pa.table({"body": text}))
    t.create_index("body")
    return t


@pytest.mark.parametrize("query", [
    Match("body", "a b", operator="and"),
    Boolean(must=(Match("body", "e"),), must_not=(Match("body", "a"),)),
    Boolean(must=(Match("body", "b"),), must_not=(Match("body", "c"),)),
])
def test_conjunctions_skip_blocks_of_the_long_list(skewed, query):
    on = search_metrics(skewed, query)
    skewed.db.settings.set("fts.pruning", False)
    off = search_metrics(skewed, query)
    skewed.db.settings.set("fts.pruning", True)
    assert on["postings_total"] == off["postings_total"] > 6_000
    assert on["blocks_skipped"] > 0 and off["blocks_skipped"] == 0
    assert on["postings_scored"] <= off["postings_scored"]


@pytest.mark.parametrize(("query", "most_scored"), [
    # The pruned disjunction of one term (a one-clause MUST is one): "c"'s first block of
    # 128 postings holds the 30 short rows, so its bound beats the threshold and each of
    # its rows is scored (the others' blocks are skipped); "z" is sought only for rows
    # beating the threshold.
    (Boolean(must=(Match("body", "c"),), must_not=(Match("body", "z"),)), 128),
    (Boolean(must=(Match("body", "c"), Match("body", "q")), should=(Match("body", "x"),),
             must_not=(Match("body", "z"),)), 100),
])
def test_exclusions_are_sought_only_for_rows_that_may_enter(query, most_scored):
    # "c" in every 10th row, the first 30 of them short (the best scores); "q" in every
    # row; "z" in every 20th. Once the top 10 are held, a long "c" row's bound (its
    # required terms' scores plus the optional term's largest) is below the 10th score:
    # it is neither scored nor looked up in "z".
    n = 20_000
    text = [("c q" if i < 300 else "c q x x x x") if i % 10 == 0 else "q x" for i in range(n)]
    text = [body + (" z" if i % 20 == 10 else "") for i, body in enumerate(text)]
    t = fts.connect().create_table("docs", pa.table({"body": text}))
    t.create_index("body")
    on = search_metrics(t, query)
    t.db.settings.set("fts.pruning", False)
    off = search_metrics(t, query)
    expected = hits(t, query, 10, 0, None)
    t.db.settings.set("fts.pruning", True)
    assert hits(t, query, 10, 0, None) == expected
    assert off["postings_scored"] >= 1_000  # the 1,000 rows of "c" without "z"
    assert on["postings_scored"] <= most_scored  # about the first 30 rows of "c"


def test_rare_required_term_reads_only_blocks_near_its_rows(skewed):
    # "e" is in the last 40 rows: "a" (20,000 postings, 157 blocks) is skipped to them.
    m = search_metrics(skewed, Match("body", "a e", operator="and"))
    assert m["postings_scored"] <= 80  # at most its 40 rows x 2 terms
    assert m["blocks_skipped"] >= 150


def test_disjunction_prunes_blocks(skewed):
    on = search_metrics(skewed, Match("body", "a c"))
    skewed.db.settings.set("fts.pruning", False)
    off = search_metrics(skewed, Match("body", "a c"))
    skewed.db.settings.set("fts.pruning", True)
    assert off["postings_scored"] == off["postings_total"] == 20_000 + 6_667
    # Once the top 10 hold rows with both terms, "a" alone cannot compete: only rows of
    # "c" are candidates, and "a" is probed at them.
    assert on["postings_scored"] == 2 * 6_667 - 4


@pytest.mark.parametrize("query", [
    Phrase("body", "a b"),
    Boolean(must=(Match("body", "a b", boost=-1.0),)),  # a multi-term clause, its boost negative
    Boolean(must=(Match("body", "a"), Match("title", "b"))),  # two columns
    Boolean(must_not=(Match("body", "a"),)),  # every row but ...
    Boolean(must=(Match("body", "a"), Boolean(must=(Match("body", "b"), Match("body", "a"))))),  # nested, second
])
def test_other_shapes_go_to_the_general_evaluator(query):
    db = fts.connect()
    t = db.create_table("docs", pa.table({"body": ["a b", "b"], "title": ["b", "a"]}))
    t.create_index("body", positions=True)
    t.create_index("title")
    plan, _ = t.plan(query, limit=5)
    search = plan.children()[0]
    assert term_slots(search.bound) is None
    list(plan.execute())
    assert "postings_total" not in search.metrics.values


def test_an_or_of_ten_thousand_terms_is_accumulated(monkeypatch):
    """Issue 19: an OR of 10,000 terms took ~30 s by MaxScore, which keeps every term's
    cursor in step at each candidate row; accumulated it reads each posting once (0.04 s
    over 30,000 rows on the development machine). Which kernel runs is counted, not timed."""
    ids = np.random.default_rng(1).integers(0, 20_000, size=(30_000, 8))
    t = fts.connect().create_table("docs", pa.table({"body": [" ".join(f"w{x}" for x in row) for row in ids]}))
    t.create_index("body")
    calls = {"accumulated": 0, "maxscore": 0}

    def counted(kind, kernel):
        def call(*args):
            calls[kind] += 1
            return kernel(*args)
        return call

    monkeypatch.setattr(term_topk, "accumulated_or_topk", counted("accumulated", term_topk.accumulated_or_topk))
    monkeypatch.setattr(term_topk, "pruned_or_topk", counted("maxscore", term_topk.pruned_or_topk))
    query = " OR ".join(f"w{i}" for i in range(10_000))
    metrics = search_metrics(t, query)
    assert calls == {"accumulated": 1, "maxscore": 0}
    assert metrics["postings_total"] == metrics["postings_scored"] == sum(len({x for x in row if x < 10_000}) for row in ids)
    assert t.search(query, limit=10, columns=[]).num_rows == 10
