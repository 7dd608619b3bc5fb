"""The text functions through db.sql (the column's index analyzer, optional arguments,
errors pointing into the SQL) and in plain DataFusion sessions after install (issue 8)."""

from __future__ import annotations

import datafusion
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import datafusion_fts as fts
from datafusion_fts.udfs import FUNCTIONS

TEXTS = ["The runners were running to the Café", "a quick brown fox", None, "cafe racers run"]


@pytest.fixture(scope="module")
def db():
    db = fts.connect()
    db.create_table("docs", pa.table({"id": [1, 2, 3, 4], "body": TEXTS, "title": ["x", "fox", "y", "z"]}))
    db.table("docs").create_index("body", analyzer="english", positions=True)
    return db


def column(db, sql: str) -> list:
    table = db.sql(sql).to_arrow_table()
    return table.column(0).to_pylist()


def test_the_column_index_analyzer_is_used(db):
    assert column(db, "SELECT highlight(body, 'run cafe') FROM docs ORDER BY id") == [
        "The runners were <b>running</b> to the <b>Café</b>", "a quick brown fox", None,
        "<b>cafe</b> racers <b>run</b>"]
    # title has no index: the default (simple) analyzer
    assert column(db, "SELECT fts_tokenize(title) FROM docs WHERE id = 2") == [["fox"]]
    assert column(db, "SELECT fts_tokenize(body) FROM docs WHERE id = 4") == [["cafe", "racer", "run"]]
    # an explicit analyzer wins
    assert column(db, "SELECT fts_tokenize(body, 'simple') FROM docs WHERE id = 4") == [["cafe", "racers", "run"]]
    assert column(db, "SELECT id FROM docs WHERE fts_match(body, 'running') ORDER BY id") == [1, 4]
    assert column(db, "SELECT id FROM docs WHERE fts_match(body, 'running', 'simple') ORDER BY id") == [1]


def test_optional_arguments(db):
    assert column(db, "SELECT highlight(body, 'fox', '[', ']') FROM docs WHERE id = 2") == ["a quick brown [fox]"]
    assert column(db, "SELECT snippet(body, 'fox', 2) FROM docs WHERE id = 2") == ["…brown <b>fox</b>"]
    assert column(db, "SELECT snippet(body, 'fox', 2, '[', ']') FROM docs WHERE id = 2") == ["…brown [fox]"]
    # ("a" is an english stop word: the window starts at the text's first token)
    assert column(db, "SELECT snippet(body, 'quick', 1, '[', ']', '...') FROM docs WHERE id = 2") == ["a [quick]..."]


def test_column_scopes_and_result_names(db):
    table = db.sql("SELECT highlight(body, 'body:fox OR title:quick') FROM docs WHERE id = 2").to_arrow_table()
    assert table.column_names == ["highlight(body, 'body:fox OR title:quick')"]
    assert table.column(0).to_pylist() == ["a quick brown <b>fox</b>"]
    table = db.sql("SELECT highlight(d.body, 'fox') AS h, upper(snippet(body, 'fox')) AS s FROM docs d WHERE id = 2").to_arrow_table()
    assert table.to_pylist() == [{"h": "a quick brown <b>fox</b>", "s": "A QUICK BROWN <B>FOX</B>"}]


def test_in_a_search_statement(db):
    rows = db.sql(
        "SELECT id, highlight(body, 'run') AS h FROM docs WHERE MATCH(body, 'run') AND fts_match(body, 'cafe') "
        "ORDER BY score() DESC LIMIT 5"
    ).to_pylist()
    assert rows == [{"id": 4, "h": "cafe racers <b>run</b>"}, {"id": 1, "h": "The runners were <b>running</b> to the Café"}]


def test_in_a_search_that_matches_no_row(db):
    """(The search's empty result reaches the functions as an empty batch.)"""
    table = db.sql(
        "SELECT highlight(body, 'run') AS h, snippet(body, 'run', 3) AS s, fts_match(body, 'run') AS m, "
        "fts_tokenize(body) AS t FROM docs WHERE MATCH(body, 'nowhere')"
    ).to_arrow_table()
    assert table.num_rows == 0
    assert table.schema.types == [pa.string(), pa.string(), pa.bool_(), pa.list_(pa.string())]


def test_errors_point_into_the_sql(db):
    with pytest.raises(fts.QuerySyntaxError) as err:
        db.sql("SELECT highlight(body, 'fox AND') FROM docs")
    assert (err.value.line, err.value.column) == (1, 29)
    assert str(err.value).startswith("highlight: argument 'query': 'AND' needs a clause after it")
    with pytest.raises(fts.SqlError, match=r"highlight takes 2 or 4 arguments \(text, query, pre, post\), got 3 at 1:8"):
        db.sql("SELECT highlight(body, 'fox', '[') FROM docs")
    with pytest.raises(fts.SqlError, match="snippet: argument 'max_tokens' must be a positive integer, got -1"):
        db.sql("SELECT snippet(body, 'fox', -1) FROM docs")
    with pytest.raises(fts.SqlError, match="fts_tokenize: argument 'analyzer': unknown analyzer 'nope'"):
        db.sql("SELECT fts_tokenize(body, 'nope') FROM docs")
    with pytest.raises(fts.SqlError, match="fts_match: argument 'query' searches column"):
        db.sql("SELECT fts_match(body, 'title:x') FROM docs")


def test_errors_raised_while_running_are_fts_errors(db):
    """A query string that is not a literal is checked row by row, inside DataFusion: the
    error still reaches db.sql's caller as itself."""
    db.ctx.from_pydict({"q": ["fox AND"]}, name="queries")
    frame = db.sql("SELECT highlight(body, q) FROM docs, queries")
    with pytest.raises(fts.QuerySyntaxError, match="highlight: argument 'query': 'AND' needs a clause after it at 1:5"):
        frame.to_arrow_table()
    with pytest.raises(fts.QuerySyntaxError):
        frame.limit(5).collect()  # derived frames too
    with pytest.raises(fts.QuerySyntaxError):
        list(frame)  # and streams
    with pytest.raises(fts.InvalidArgument, match="k must be positive"):
        db.sql("SELECT * FROM fts_search('docs', 'body', 'fox', 0)")
    # A plain session reports DataFusion's error, which names ours.
    with pytest.raises(Exception, match="QuerySyntaxError") as err:
        db.ctx.sql("SELECT highlight(body, q) FROM docs, queries").collect()
    assert not isinstance(err.value, fts.FtsError)


def test_every_function_in_a_plain_session(tmp_path):
    ctx = datafusion.SessionContext()
    fts.install(ctx)
    for spec in FUNCTIONS.values():
        assert ctx.udf(spec.name) is not None and ctx.udf(spec.full_name) is not None
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"t": ["Quick foxes", None]}), path)
    ctx.register_parquet("p", str(path))  # string_view columns
    rows = ctx.sql(
        "SELECT highlight(t, 'quick') AS h, snippet(t, 'quick') AS s, fts_match(t, 'fox*') AS m, fts_tokenize(t) AS k, "
        "highlight_with(t, 'fox', '[', ']', 'english', NULL, NULL) AS e, fts_match_with(t, 'fox', 'english', NULL, NULL) AS me, "
        "snippet_with(t, 'fox', 1, '[', ']', '~', 'english', NULL, NULL) AS se, fts_tokenize_with(t, 'english', NULL) AS ke FROM p"
    ).to_pylist()
    assert rows == [
        {"h": "<b>Quick</b> foxes", "s": "<b>Quick</b> foxes", "m": True, "k": ["quick", "foxes"],
         "e": "Quick [foxes]", "me": True, "se": "~[foxes]", "ke": ["quick", "fox"]},
        dict.fromkeys(["h", "s", "m", "k", "e", "me", "se", "ke"]),
    ]
