"""fts_match(): a text matches a query exactly when a search of a table holding only
that text returns it (issue 8; docs/design.md: "The query tree and the query string"; "Compound
queries" matching)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference import RefTable, ref_search
from strategies import QUERY_WORDS, query_trees, values

from datafusion_fts.analysis import analyzer_for, make_analyzer_config
from datafusion_fts.udfs.fts_match import match_mask
from datafusion_fts.udfs.text_query import BatchMatch, TextQuery

GOLDEN = [
    ("the quick brown fox", "fox", None, True),
    ("the quick brown fox", "+fox -quick", None, False),
    ("the quick brown fox", "fox AND (dog OR brown)", None, True),
    ("the quick brown fox", '"brown fox"', None, True),
    ("the quick brown fox", '"quick fox"', None, False),
    ("the quick brown fox", '"quick fox"~1', None, True),
    ("the quick brown fox", '"brown quick"~2', None, True),  # any order, a transposition costs 2
    ("the quick brown fox", '"brown quick"~1', None, False),
    ("the quick brown fox", '"quick bro"*', None, True),
    ("the quick brown fox", '"quick fo"*', None, False),
    ("the quick brown fox", '"fox quick"*~3', None, True),
    ("the quick brown fox", "qu*", None, True),
    ("the quick brown fox", "fix~1", None, True),
    ("the quick brown fox", "fix~0", None, False),
    ("Running FAST", "run", "english", True),
    ("Running FAST", "run", None, False),
    ("Ein Café", "cafe", "folding", True),
    ("", "-fox", None, True),  # a query of only exclusions matches every other text
    ("a fox", "-fox", None, False),
]


@pytest.mark.parametrize("text, query, analyzer, expected", GOLDEN)
def test_golden(session, text, query, analyzer, expected):
    assert session.one("fts_match_with(t, q, a, NULL, NULL)", t=text, q=query, a=analyzer) is expected


def test_nulls(session):
    assert session.rows("fts_match(t, q)", t=[None, "a", "a"], q=["a", None, "a"]) == [None, None, True]


def test_a_query_on_another_column_is_refused(session):
    with pytest.raises(Exception, match="fts_match: argument 'query' searches column"):
        session.one("fts_match(t, 'title:fox')", t="fox")


@given(st.lists(values(), min_size=1, max_size=10), query_trees(["body"], QUERY_WORDS, max_depth=3))
def test_matches_a_search_of_the_text_alone(texts, tree):
    query = TextQuery(tree, "body", analyzer_for(make_analyzer_config()))
    array = pa.array(texts, pa.string())
    got = set(BatchMatch(query, array).matched_rows().tolist())
    # The substring prefilter answers as the full evaluation does.
    assert set(np.flatnonzero(match_mask(query, array)).tolist()) == got - {i for i, t in enumerate(texts) if t is None}
    for row, text in enumerate(texts):
        if text is None:
            continue
        alone = RefTable(rows={0: {"body": text}}, columns=["body"])
        assert (row in got) == bool(ref_search(alone, tree)), (text, tree)
