"""A statement with full-text parts keeps the rest of its text (issue 31, item 2;
sql/text/splice.py): lowering edits the user's text where MATCH, score(), the searched table
and ``*`` are, and DataFusion runs everything else as written."""

from __future__ import annotations

import itertools

import pyarrow as pa
import pytest
from sqlglot import exp

import datafusion_fts as fts
from datafusion_fts.sql.search.lower_statement import lower_statement
from datafusion_fts.sql.search.search_scores import conjuncts as _conjuncts
from datafusion_fts.sql.text.dialect import parse_sql
from datafusion_fts.sql.text.splice import Splicer

SCHEMAS = {
    "docs": (pa.schema([("id", pa.int32()), ("body", pa.string()), ("year", pa.int32())]), True),
    "other": (pa.schema([("k", pa.int64())]), False),
}


def lowered_text(sql: str) -> str | None:
    names = (f"r{i}" for i in itertools.count())
    _, text = lower_statement(sql, parse_sql(sql)[0], SCHEMAS.get, lambda: next(names), splicer=Splicer(sql))
    return text


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT id, score() FROM docs WHERE MATCH(body, 'a') AND year > 2000 ORDER BY score() DESC LIMIT 3",
     'SELECT id, "docs"."_score" FROM "r0" AS "docs" WHERE TRUE AND year > 2000 '
     'ORDER BY "docs"."_score" DESC, "docs"."_rowid" ASC LIMIT 3'),
    # NOT MATCH: FALSE under one NOT, so the literal holds for every row found.
    ("SELECT id FROM docs d WHERE MATCH(body, 'a') AND NOT MATCH(body, 'b')",
     'SELECT id FROM "r0" AS "d" WHERE TRUE AND NOT FALSE'),
    # A MATCH under OR beside another predicate (the general plan): the row's mark, looked
    # up by its row id, read under a name no other column has.
    ("SELECT id FROM docs WHERE MATCH(body, 'a') OR year = 1",
     'SELECT id FROM (SELECT *, "_rowid" AS "r0_rowid" FROM "__fts_rows_docs") AS "docs" '
     'WHERE r0_hit("docs"."r0_rowid") OR year = 1'),
    # Beside an outer join the fast path's MATCH is whether the row exists (NULL side).
    ("SELECT o.k FROM other o LEFT JOIN docs d ON d.id = o.k WHERE MATCH(d.body, 'a')",
     'SELECT o.k FROM other o LEFT JOIN "r0" AS "d" ON d.id = o.k WHERE ("d"."_rowid" IS NOT NULL)'),
    # The rest as written: a cast DataFusion reads as Float32, EXCLUDE, a window over score().
    ("SELECT *  EXCLUDE (year), '1'::float AS f, rank() OVER (ORDER BY score() DESC) AS r FROM docs "
     "WHERE MATCH(body, 'a')",
     'SELECT * EXCLUDE ("_rowid", "_score", year), \'1\'::float AS f, rank() OVER (ORDER BY "docs"."_score" DESC) '
     'AS r FROM "r0" AS "docs" WHERE TRUE'),
    # Another table read beside the search: DataFusion's own table as written, a managed
    # one as written too (with the keys DataFusion knows it by) unless the statement reads
    # row ids: then through its rows; a * over both spelled per table.
    ("SELECT * FROM docs JOIN other ON other.k = docs.id WHERE MATCH(body, 'a')",
     'SELECT "docs".* EXCLUDE ("_rowid", "_score"), "other".* FROM "r0" AS "docs" JOIN other ON other.k = docs.id '
     'WHERE TRUE'),
    ("SELECT id FROM docs WHERE MATCH(body, 'a') AND id IN (SELECT id FROM docs WHERE year > 1)",
     'SELECT id FROM "r0" AS "docs" WHERE TRUE AND id IN (SELECT id FROM docs WHERE year > 1)'),
    ("SELECT id FROM docs WHERE MATCH(body, 'a') AND _rowid IN (SELECT _rowid FROM docs WHERE year > 1)",
     'SELECT id FROM "r0" AS "docs" WHERE TRUE AND _rowid IN (SELECT _rowid FROM "__fts_rows_docs" AS "docs" '
     'WHERE year > 1)'),
])
def test_only_the_full_text_parts_are_edited(sql: str, expected: str) -> None:
    assert lowered_text(sql) == expected


@pytest.fixture(scope="module")
def db() -> fts.Database:
    db = fts.connect()
    db.sql("CREATE TABLE docs (id INT, body VARCHAR, year INT) AS VALUES "
           "(1, 'alpha beta', 2000), (2, 'beta', 2010), (3, 'alpha', 2020), (4, 'gamma', 2021)")
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    return db


def rows(db: fts.Database, sql: str) -> list[dict]:
    return db.sql(sql).to_pylist()


def test_star_modifiers_beside_a_search(db: fts.Database) -> None:
    """Issue 31: EXCLUDE and REPLACE were dropped when a statement searched (silently)."""
    assert rows(db, "SELECT * EXCLUDE (year) FROM docs WHERE MATCH(body, 'alpha') ORDER BY id") == [
        {"id": 1, "body": "alpha beta"}, {"id": 3, "body": "alpha"}]
    assert rows(db, "SELECT * REPLACE (year + 1 AS year) FROM docs WHERE MATCH(body, 'alpha') ORDER BY id") == [
        {"id": 1, "body": "alpha beta", "year": 2001}, {"id": 3, "body": "alpha", "year": 2021}]


def test_casts_keep_datafusions_types_beside_a_search(db: fts.Database) -> None:
    """Issue 31: sqlglot wrote '1'::float back as a DOUBLE PRECISION (Float64)."""
    assert rows(db, "SELECT arrow_typeof('1'::float) AS t FROM docs WHERE MATCH(body, 'gamma')") == [{"t": "Float32"}]


def test_negated_and_joined_matches_select_the_same_rows(db: fts.Database) -> None:
    assert rows(db, "SELECT id FROM docs WHERE MATCH(body, 'alpha OR beta') AND NOT MATCH(body, 'beta') "
                    "ORDER BY id") == [{"id": 3}]
    assert rows(db, "SELECT id, score() > 0 AS found FROM docs WHERE MATCH(body, 'gamma') OR year = 2000 "
                    "ORDER BY id") == [{"id": 1, "found": False}, {"id": 4, "found": True}]
    assert rows(db, "SELECT id FROM docs WHERE NOT MATCH(body, 'alpha') ORDER BY id") == [{"id": 2}, {"id": 4}]


def test_datafusion_constructs_combine_with_a_search(db: fts.Database) -> None:
    assert rows(db, "WITH hits AS (SELECT id, score() AS s FROM docs WHERE MATCH(body, 'alpha')) "
                    "SELECT count(*) AS n FROM hits") == [{"n": 2}]
    assert rows(db, "SELECT id FROM docs WHERE MATCH(body, 'alpha') UNION ALL SELECT 9 ORDER BY id") == [
        {"id": 1}, {"id": 3}, {"id": 9}]
    ranked = rows(db, "SELECT id, rank() OVER (ORDER BY score() DESC) AS r FROM docs WHERE MATCH(body, 'alpha beta') "
                      "ORDER BY id")
    assert ranked == [{"id": 1, "r": 1}, {"id": 2, "r": 2}, {"id": 3, "r": 2}]
    assert rows(db, "SELECT d.id FROM fts_search('docs', 'body', 'gamma', 3) AS s JOIN docs AS d "
                    "ON d._rowid = s._rowid") == [{"id": 4}]


def test_a_session_tables_rows_keep_the_sessions_types(tmp_path) -> None:
    """A search of a table the database does not manage returns its rows' columns with
    the types DataFusion gives them (a Parquet file's text is Utf8View), not the plain types
    the scan searches (found by the differential run with a search added)."""
    import datafusion
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [1, 2], "body": ["alpha", "beta"]}), tmp_path / "f.parquet")
    ctx = datafusion.SessionContext()
    ctx.register_parquet("f", str(tmp_path / "f.parquet"))
    db = fts.connect(ctx=ctx)
    plain = ctx.sql("SELECT * FROM f WHERE id = 1").to_arrow_table()
    found = db.sql("SELECT * FROM f WHERE MATCH(body, 'alpha')").to_arrow_table()
    assert found.schema == plain.schema and found.to_pylist() == plain.to_pylist()


@pytest.mark.parametrize(("where", "expected"), [
    ("MATCH(body, 'a') AND year > 2000 AND price::float BETWEEN 1 AND 2",
     ["MATCH(body, 'a')", "year > 2000", "price::float BETWEEN 1 AND 2"]),
    ("upper(d.title) = 'X' AND NOT (year < 3) AND MATCH(body, 'a')",
     ["upper(d.title) = 'X'", "NOT (year < 3)", "MATCH(body, 'a')"]),
    ("(year > 1 AND year < 5) AND MATCH(body, 'a')", None),  # (one piece of text, two conjuncts)
    ("CASE WHEN year > 1 AND year < 5 THEN 1 END = 1 AND MATCH(body, 'a')", None),
])
def test_a_where_clause_splits_into_its_conjuncts_as_written(where: str, expected: list[str] | None) -> None:
    sql = f"SELECT id FROM docs AS d WHERE {where} ORDER BY id LIMIT 3"
    conjuncts = _conjuncts(parse_sql(sql)[0].find(exp.Where).this)
    assert Splicer(sql).conjunct_texts(conjuncts) == expected


def test_a_prefilter_is_the_users_own_sql() -> None:
    """The prefilter DataFusion runs beside a MATCH is the conjunct as written: generated
    by sqlglot, ``'0.1'::float`` became a DOUBLE PRECISION, which no Float32 0.1 equals, and
    the row was silently missing."""
    db = fts.connect()
    t = db.create_table("t", pa.table({"id": [1, 2], "body": ["a b", "a c"], "x": pa.array([0.1, 0.2], pa.float32())}))
    t.create_index("body")
    plain = db.ctx.sql("SELECT id FROM t WHERE x = '0.1'::float").to_pydict()
    assert db.sql("SELECT id FROM t WHERE MATCH(body, 'a') AND x = '0.1'::float ORDER BY id").to_pydict() == plain == {"id": [1]}


def test_a_prefilter_keeps_the_edits_of_its_text_functions() -> None:
    """A text function in a prefilter is the call the statement's rewrite made of it (with
    the column's analyzer, English: 'cafe' finds 'Café'), not the call as written (with
    the default one, which keeps accents: the row was missing)."""
    db = fts.connect()
    t = db.create_table("t", pa.table({"id": [1, 2], "body": ["run to the Café", "run home"]}))
    t.create_index("body", analyzer="english")
    found = db.sql("SELECT id FROM t WHERE MATCH(body, 'run') AND fts_match(body, 'cafe') ORDER BY id").to_pydict()
    assert found == {"id": [1]}
