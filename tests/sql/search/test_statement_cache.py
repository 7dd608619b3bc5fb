"""Search statements cached by shape (sql/search/search_templates.py, sql/text/shapes.py): a statement of a known shape
is not parsed or lowered again, and returns exactly what a fresh database returns for it."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datafusion_fts as fts
from datafusion_fts.errors import QuerySyntaxError
from datafusion_fts.sql.search import execute
from datafusion_fts.sql.text.shapes import shape_of

BODIES = ["alpha beta", "beta gamma it's", "gamma delta", "alpha alpha delta", "epsilon", "beta"]
LANGS = ["en", "fr", "en", "de", "fr", "en"]
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "it's"]


def make_db() -> fts.Database:
    db = fts.connect()
    docs = db.create_table("docs", pa.table({"id": list(range(len(BODIES))), "lang": LANGS, "body": BODIES}))
    docs.create_index("body")
    return db


def lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def select(query: str, lang: str = "en", limit: int = 10) -> str:
    return (f"SELECT _rowid, id, body, score() AS s FROM docs WHERE MATCH(body, {lit(query)}) "
            f"AND lang <> {lit(lang)} ORDER BY s DESC LIMIT {limit}")


def result(db: fts.Database, sql: str) -> list[tuple]:
    table = db.sql(sql).to_arrow_table()
    return [tuple(repr(v) for v in row.values()) for row in table.to_pylist()]


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The texts parse_sql is asked to parse."""
    seen: list[str] = []
    real = execute.parse_sql

    def counting(text: str):
        seen.append(text)
        return real(text)

    monkeypatch.setattr(execute, "parse_sql", counting)
    return seen


def test_a_known_shape_is_not_parsed_again_and_answers_as_a_fresh_database(parses) -> None:
    texts = ["alpha", "gamma -delta", '"beta gamma"']
    expected = [result(make_db(), select(t)) for t in texts]
    db = make_db()
    parses.clear()
    assert [result(db, select(t)) for t in texts] == expected
    assert len(parses) == 1  # only the first statement of the shape was parsed
    assert [r[1] for r in expected[1]] == ["1"]  # (gamma and not delta, not English)


def test_other_literals_and_numbers_are_part_of_the_shape(parses) -> None:
    statements = [select("beta", lang="en"), select("beta", lang="fr"), select("beta", limit=1),
                  select("alpha", lang="fr")]
    expected = [result(make_db(), sql) for sql in statements]
    db = make_db()
    parses.clear()
    assert [result(db, sql) for sql in statements] == expected
    assert len(parses) == 3  # the last has the shape of the second


def test_new_rows_are_searched_through_a_known_shape(parses) -> None:
    expected = result(_with_row(), select("alpha zeta"))
    db = make_db()
    parses.clear()
    result(db, select("alpha"))
    db.table("docs").insert(pa.table({"id": [9], "lang": ["es"], "body": ["alpha zeta"]}))
    assert result(db, select("alpha zeta")) == expected
    assert len(parses) == 1
    result(make_db(), select("alpha"))  # another database: a cache of its own
    assert len(parses) == 2


def _with_row() -> fts.Database:
    db = make_db()
    db.table("docs").insert(pa.table({"id": [9], "lang": ["es"], "body": ["alpha zeta"]}))
    return db


def test_a_schema_change_invalidates_the_template() -> None:
    db = fts.connect()
    db.ctx.register_record_batches("plain", [pa.table({"body": ["alpha", "beta"]}).to_batches()])
    first = result(db, "SELECT body, score() FROM plain WHERE MATCH(body, 'alpha')")
    db.ctx.deregister_table("plain")
    db.ctx.register_record_batches("plain", [pa.table({"n": [1, 2], "body": ["beta", "alpha"]}).to_batches()])
    again = result(db, "SELECT body, score() FROM plain WHERE MATCH(body, 'beta')")
    assert [r[0] for r in first] == ["'alpha'"] and [r[0] for r in again] == ["'beta'"]


def test_a_syntax_error_in_a_cached_shape_points_into_the_sql() -> None:
    db = make_db()
    result(db, select("alpha"))
    bad = select("(alpha")
    with pytest.raises(QuerySyntaxError) as cached:
        db.sql(bad)
    with pytest.raises(QuerySyntaxError) as fresh:
        make_db().sql(bad)
    assert str(cached.value) == str(fresh.value)


def test_the_same_shape_in_threads() -> None:
    db = make_db()
    result(db, select("alpha"))
    expected = {w: result(make_db(), select(w)) for w in WORDS}
    failures: list[str] = []

    def run(word: str) -> None:
        for _ in range(20):
            if result(db, select(word)) != expected[word]:
                failures.append(word)

    threads = [threading.Thread(target=run, args=(w,)) for w in WORDS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


@pytest.mark.parametrize("sql", [
    "SELECT id FROM docs WHERE MATCH(body, 'alpha') -- a comment",
    'SELECT "id" FROM docs WHERE MATCH(body, \'alpha\')',
    "SELECT id FROM docs WHERE MATCH(body, 'alpha'); SELECT 1",
    "SELECT id FROM docs WHERE MATCH(body, E'alpha')",
    "SELECT id FROM docs WHERE MATCH(body, 'alpha\\')",
])
def test_unusual_texts_have_no_shape(sql: str) -> None:
    assert shape_of(sql) is None


def test_text_functions_are_not_cached(parses) -> None:
    db = make_db()
    sql = "SELECT snippet(body, {q}) AS s FROM docs WHERE MATCH(body, {q}) ORDER BY score() DESC LIMIT 1"
    assert result(db, sql.format(q="'gamma'")) == result(make_db(), sql.format(q="'gamma'"))
    assert result(db, sql.format(q="'delta'")) == result(make_db(), sql.format(q="'delta'"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS + ["+alpha", "-beta", "OR", "AND", '"beta gamma"']),
                         min_size=1, max_size=4).map(" ".join), min_size=2, max_size=5))
def test_any_texts_through_one_shape(texts: list[str]) -> None:
    db = make_db()
    for text in texts:
        try:
            expected = result(make_db(), select(text))
        except QuerySyntaxError:
            with pytest.raises(QuerySyntaxError):
                db.sql(select(text))
            continue
        assert result(db, select(text)) == expected


DIRECT = [
    "SELECT _rowid, id, body, score() AS s FROM docs WHERE MATCH(body, {q}) ORDER BY s DESC LIMIT 3",
    "SELECT id, score() FROM docs WHERE MATCH(body, {q}) ORDER BY score() DESC LIMIT 2 OFFSET 1",
    "SELECT body AS Text, ID FROM docs WHERE MATCH(body, {q}) ORDER BY score() DESC LIMIT 10",
    "SELECT * FROM docs WHERE MATCH(body, {q}) ORDER BY score() DESC LIMIT 4",
    "SELECT d.id, d._rowid FROM docs AS d WHERE MATCH(d.body, {q}) ORDER BY score() DESC LIMIT 5",
    "SELECT id FROM docs WHERE MATCH(body, {q}) ORDER BY score() DESC LIMIT 0",
    "SELECT id, lang FROM docs WHERE MATCH(body, {q}) LIMIT 3",
    "SELECT id FROM docs WHERE MATCH(body, {q})",
    "SELECT count(*) FROM docs WHERE MATCH(body, {q})",
    "SELECT COUNT(*) AS N FROM docs AS d WHERE MATCH(d.body, {q})",
    "SELECT count(*) FROM docs WHERE MATCH(body, {q}) GROUP BY lang",
    "SELECT d.lang AS l, count(*) AS n, max(id) AS last FROM docs AS d WHERE MATCH(d.body, {q}) GROUP BY d.lang "
    "ORDER BY n DESC, l LIMIT 2",
]
NOT_DIRECT = [
    "SELECT id FROM docs WHERE MATCH(body, {q}) AND lang = 'en' ORDER BY score() DESC LIMIT 3",
    "SELECT id, score() + 1 AS t FROM docs WHERE MATCH(body, {q}) ORDER BY score() DESC LIMIT 3",
    "SELECT id FROM docs WHERE MATCH(body, {q}) ORDER BY id LIMIT 3",
    "SELECT count(*) FROM docs WHERE MATCH(body, {q}) LIMIT 0",
    "SELECT count(*) AS matches FROM docs WHERE MATCH(body, {q}) AND lang = 'en'",
    "SELECT count(*), count(*) AS again FROM docs WHERE MATCH(body, {q})",
    "SELECT count(id) FROM docs WHERE MATCH(body, {q})",
    "SELECT count(DISTINCT lang) FROM docs WHERE MATCH(body, {q})",
    "SELECT id FROM docs WHERE MATCH(body, {q}) ORDER BY score() ASC LIMIT 3",
    "SELECT lang, count(*) AS n FROM docs WHERE MATCH(body, {q}) GROUP BY lang ORDER BY n DESC LIMIT 1",
]


@pytest.mark.parametrize("sql", DIRECT + NOT_DIRECT)
def test_a_statement_answered_without_datafusion_answers_as_datafusion(sql: str, monkeypatch) -> None:
    """The direct form (a search result sliced and renamed) returns what DataFusion returns
    for the statement: the same names, types, rows and order."""
    db = make_db()
    db.sql(sql.format(q="'alpha'")).to_arrow_table()  # (the template)
    template = next(iter(db.statements._items.values()))
    assert (template.direct is not None) == (sql in DIRECT)
    got = db.sql(sql.format(q="'beta delta'")).to_arrow_table()
    monkeypatch.setattr(execute, "direct", lambda statement, lowered, schema_of: None)
    reference = make_db()
    expected = reference.sql(sql.format(q="'beta delta'")).to_arrow_table()
    assert next(iter(reference.statements._items.values())).direct is None  # (DataFusion ran it)
    if "ORDER BY" not in sql:  # (SQL leaves the order open)
        got, expected = (t.sort_by([(t.column_names[0], "ascending")]) for t in (got, expected))
    assert got.schema == expected.schema
    assert got.equals(expected)
