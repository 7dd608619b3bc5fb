"""fts_tokenize(): the terms an index sees (issue 8)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference import analyze
from strategies import values


@given(texts=st.lists(values(), min_size=1, max_size=10))
def test_simple_tokens_are_the_references(session, texts):
    got = session.rows("fts_tokenize(t)", t=texts)
    assert got == [None if t is None else analyze(t) for t in texts]


def test_analyzers(session):
    text = "The Runners were RUNNING to the Café"
    assert session.one("fts_tokenize(t)", t=text) == ["the", "runners", "were", "running", "to", "the", "café"]
    assert session.one("fts_tokenize_with(t, 'english', NULL)", t=text) == ["runner", "were", "run", "cafe"]
    assert session.one("fts_tokenize_with(t, 'folding', NULL)", t=text)[-1] == "cafe"
    options = '{"analyzer": "english", "stop_words": "none", "max_token_length": 4}'
    # (café is 5 UTF-8 bytes before folding: over the limit)
    assert session.one(f"fts_tokenize_with(t, '{options}', NULL)", t=text) == ["the", "were", "to", "the"]


def test_return_type_and_nulls(session):
    table = session.ctx.sql("SELECT fts_tokenize(NULL) AS x, fts_tokenize('') AS y").to_arrow_table()
    assert table.schema.field("x").type == pa.list_(pa.string())
    assert table.to_pylist() == [{"x": None, "y": []}]


def test_bad_analyzer_names_the_argument(session):
    with pytest.raises(Exception, match="fts_tokenize: argument 'analyzer': unknown analyzer 'klingon'"):
        session.one("fts_tokenize_with(t, 'klingon', NULL)", t="a")
    with pytest.raises(Exception, match="argument 'analyzer': not a JSON object"):
        session.one("fts_tokenize_with(t, '{nope', NULL)", t="a")
