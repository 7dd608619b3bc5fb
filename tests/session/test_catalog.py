"""The session's schema as DataFusion sees it: SHOW TABLES and information_schema list the
user's and the managed tables (not the engine's own), and nothing reaches stderr."""

from __future__ import annotations

import datafusion
import pyarrow as pa
import pytest

import datafusion_fts as fts


@pytest.fixture
def db():
    db = fts.connect()
    docs = db.create_table("docs", pa.table({"id": [1, 2], "body": ["a b", "b c"]}))
    docs.create_index("body")
    db.ctx.register_record_batches("mine", [[pa.record_batch({"x": [1]})]])
    return db


def test_show_tables_and_information_schema_list_the_sessions_tables(db, capfd):
    db.sql("SELECT id FROM docs WHERE MATCH(body, 'b') ORDER BY score() DESC").to_arrow_table()  # (a temporary result)
    shown = db.sql("SHOW TABLES").to_arrow_table().to_pydict()
    public = sorted(n for n, s in zip(shown["table_name"], shown["table_schema"]) if s == "public")
    assert public == ["docs", "mine"]
    listed = db.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").to_arrow_table()
    assert sorted(listed.column(0).to_pylist()) == ["docs", "mine"]
    assert db.ctx.catalog().schema().names() == {"docs", "mine"}
    assert capfd.readouterr().err == ""


def test_statements_sqlglot_cannot_parse_print_nothing(db, capfd):
    assert "body" in db.sql("SHOW COLUMNS FROM docs").to_arrow_table().column("column_name").to_pylist()
    with pytest.raises(fts.FtsError):
        db.sql("VACUUM docs").to_arrow_table()
    assert capfd.readouterr().err == ""


def test_an_in_memory_table_is_the_table_create_table_makes() -> None:
    """In memory, a managed table is DataFusion's own in-memory table made from its column
    definitions (session/table_views.py ``_register_in_memory``): a BASE TABLE scanned by name,
    whose primary key lets a GROUP BY select the other columns, and whose default fills a
    later insert; each as plain DataFusion answers, after inserts, a delete and a search."""
    statements = [
        "CREATE TABLE t (k INT PRIMARY KEY, body VARCHAR DEFAULT 'brown fox', n INT) AS VALUES (1, 'a fox', 10), (2, 'a dog', 20)",
        "INSERT INTO t (k, n) VALUES (3, 30)",
        "INSERT INTO t VALUES (4, 'cat', 40)",
    ]
    queries = [
        "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public'",
        "SELECT k, body, n FROM t GROUP BY k ORDER BY k",
        "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 't' ORDER BY column_name",
    ]
    plain = datafusion.SessionContext()
    db = fts.connect(ctx=datafusion.SessionContext())
    for sql in statements:
        plain.sql(sql).collect()
        db.sql(sql).to_arrow_table()
    for sql in queries:
        assert db.sql(sql).to_arrow_table() == plain.sql(sql).to_arrow_table(), sql
    explain = "EXPLAIN SELECT k FROM t WHERE n > 15"
    logical = db.sql(explain).to_arrow_table().to_pylist()[0]
    assert logical == plain.sql(explain).to_arrow_table().to_pylist()[0]
    assert "TableScan: t projection=[k, n]" in logical["plan"]
    assert db.sql("SELECT k FROM t WHERE MATCH(body, 'fox') ORDER BY k").to_pydict() == {"k": [1, 3]}
    db.sql("DELETE FROM t WHERE k = 1")
    plain.sql("DELETE FROM t WHERE k = 1").collect()
    for sql in queries:
        assert db.sql(sql).to_arrow_table() == plain.sql(sql).to_arrow_table(), sql


def test_a_definition_reads_in_the_dialect_it_was_written_in() -> None:
    """A table made under DuckDB's dialect (``struct(...)`` columns, which DataFusion's
    own dialect does not parse) is made again at each write from its definition in a
    session of the user's settings (an in-memory table of a session of default settings
    failed to parse it: 66 of struct.slt's records)."""
    plain = datafusion.SessionContext()
    db = fts.connect(ctx=datafusion.SessionContext())
    statements = [
        "SET datafusion.sql_parser.dialect = 'DuckDB'",
        "CREATE TABLE t (c1 struct(r varchar, b int), c2 struct(r varchar, b float)) "
        "AS VALUES ({r: 'red', b: 2}, {r: 'blue', b: 2.3})",
        "INSERT INTO t VALUES ({r: 'green', b: 3}, {r: 'grey', b: 4.5})",
    ]
    for sql in statements:
        plain.sql(sql).collect()
        db.sql(sql).to_arrow_table()
    query = "SELECT c1['r'] AS r, arrow_typeof(c2) AS t FROM t ORDER BY r"
    assert db.sql(query).to_arrow_table() == plain.sql(query).to_arrow_table()


def test_a_schema_the_session_had_before_connect_is_read_as_datafusion_reads_it(tmp_path) -> None:
    """cte.slt (issue 41; DataFusion's runner registers ``strict_schema`` first): a schema
    of the session's catalog was kept as Python's wrapper of it, whose table lookup,
    called by DataFusion as it planned, panicked ("Cannot start a runtime from within a
    runtime"); so did every statement naming one of its tables. Both setups."""
    def session() -> datafusion.SessionContext:
        ctx = datafusion.SessionContext()
        inner = datafusion.catalog.Schema.memory_schema()
        own = datafusion.SessionContext()
        own.register_record_batches("orders", [[pa.record_batch([[1, 2]], names=["order_id"])]])
        inner.register_table("orders", own.catalog().schema().table("orders"))
        ctx.catalog().register_schema("strict_schema", inner)
        ctx.register_record_batches("kept", [[pa.record_batch([[3]], names=["x"])]])
        return ctx

    statements = ["SELECT * FROM strict_schema.orders ORDER BY order_id", "SELECT * FROM kept",
                  "SET datafusion.catalog.default_schema = strict_schema",
                  "WITH barbaz AS (SELECT * FROM orders) SELECT * FROM barbaz ORDER BY order_id"]
    plain = session()
    expected = [plain.sql(sql).to_arrow_table() for sql in statements]
    for where in (None, tmp_path / "db"):
        db = fts.connect(where, ctx=session())
        assert [db.sql(sql).to_arrow_table() for sql in statements] == expected
