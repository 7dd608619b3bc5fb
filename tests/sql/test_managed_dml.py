"""DDL and DML on managed tables answer as DataFusion answers for its own tables, and keep
the tables' search features (issue 31; sql/managed_dml.py). Each minimal case of the
issue is a test here; tests/sql/parity/*.slt runs them against plain DataFusion too."""

from __future__ import annotations

from pathlib import Path

import datafusion
import pyarrow as pa
import pytest

import datafusion_fts as fts


@pytest.fixture(params=["memory", "directory"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> fts.Database:
    return fts.connect(None if request.param == "memory" else tmp_path / "db")


def answer(db: fts.Database, sql: str) -> list[dict]:
    return db.sql(sql).to_pylist()


def test_a_column_list_names_the_columns_of_create_table_as(db: fts.Database) -> None:
    db.sql("CREATE TABLE t (a INT, b VARCHAR) AS VALUES (1, 'x')")
    assert answer(db, "SELECT a, b FROM t") == [{"a": 1, "b": "x"}]
    assert db.sql("SELECT * FROM t").schema() == pa.schema([("a", pa.int32()), ("b", pa.string_view())])


def test_star_shows_the_declared_columns_and_never_the_row_id(db: fts.Database) -> None:
    db.sql("CREATE TABLE t (a INT NOT NULL, b VARCHAR) AS VALUES (1, 'x')")
    for sql in ("SELECT * FROM t", "SELECT t.* FROM t", "SELECT * FROM t GROUP BY a, b"):
        assert db.sql(sql).schema().names == ["a", "b"], sql
    assert answer(db, "DESCRIBE t") == [
        {"column_name": "a", "data_type": "Int32", "is_nullable": "NO"},
        {"column_name": "b", "data_type": "Utf8View", "is_nullable": "YES"},
    ]
    assert answer(db, "SELECT _rowid, a FROM t") == [{"_rowid": 0, "a": 1}]


def test_replace_and_exclude_reach_datafusion(db: fts.Database) -> None:
    db.sql("CREATE TABLE p (name VARCHAR, price INT) AS VALUES ('pen', 10)")
    assert answer(db, "SELECT * REPLACE (price * 2 AS price) FROM p") == [{"name": "pen", "price": 20}]
    assert answer(db, "SELECT * EXCLUDE (price) FROM p") == [{"name": "pen"}]


def test_not_null_and_default_hold_for_inserts(db: fts.Database) -> None:
    db.sql("CREATE TABLE nn (a INT NOT NULL, b INT DEFAULT 5)")
    with pytest.raises(fts.EngineError, match="non-nullable"):
        db.sql("INSERT INTO nn VALUES (NULL, 1)")
    assert answer(db, "INSERT INTO nn (a) VALUES (1)") == [{"count": 1}]
    assert answer(db, "SELECT * FROM nn") == [{"a": 1, "b": 5}]


def test_the_definition_outlives_the_process(tmp_path: Path) -> None:
    """A database directory keeps the column definitions: DEFAULT after a reopen."""
    fts.connect(tmp_path / "db").sql("CREATE TABLE nn (a INT NOT NULL, b INT DEFAULT 5)")
    db = fts.connect(tmp_path / "db")
    db.sql("INSERT INTO nn (a) VALUES (2)")
    assert answer(db, "SELECT * FROM nn") == [{"a": 2, "b": 5}]
    assert answer(db, "DESCRIBE nn")[0] == {"column_name": "a", "data_type": "Int32", "is_nullable": "NO"}


def test_values_are_cast_as_datafusion_casts_them(db: fts.Database) -> None:
    db.sql("CREATE TABLE tm (v TIME, d DECIMAL(10, 2), u INT UNSIGNED)")
    db.sql("INSERT INTO tm VALUES ('00:00:01', 3, 7)")
    table = db.sql("SELECT * FROM tm").to_arrow_table()
    assert [str(f.type) for f in table.schema] == ["time64[ns]", "decimal128(10, 2)", "uint32"]
    assert str(table.column("d")[0]) == "3.00"


def test_a_file_copy_reads_back_as_datafusion_wrote_it(db: fts.Database, tmp_path: Path) -> None:
    db.sql("CREATE TABLE src (a INT) AS VALUES (1), (2)")
    target = tmp_path / "f.parquet"
    assert answer(db, f"COPY src TO '{target}'") == [{"count": 2}]
    db.sql(f"CREATE EXTERNAL TABLE ext (a INT) STORED AS PARQUET LOCATION '{target}'")
    assert sorted(r["a"] for r in answer(db, "SELECT a FROM ext")) == [1, 2]


def test_update_and_delete_answer_datafusion_counts(db: fts.Database) -> None:
    db.sql("CREATE TABLE docs (id INT, body VARCHAR) AS VALUES (1, 'alpha beta'), (2, 'beta'), (3, 'gamma')")
    db.sql("CREATE FULLTEXT INDEX ON docs (body)")
    assert answer(db, "UPDATE docs SET body = 'delta alpha' WHERE id = 2") == [{"count": 1}]
    # The new version is searchable at once, the old one is gone from every statistic.
    hits = answer(db, "SELECT id FROM docs WHERE MATCH(body, 'alpha') ORDER BY score() DESC")
    assert sorted(h["id"] for h in hits) == [1, 2]
    assert answer(db, "SELECT id FROM docs WHERE MATCH(body, 'beta')") == [{"id": 1}]
    assert answer(db, "DELETE FROM docs WHERE id > 2") == [{"count": 1}]
    assert answer(db, "DELETE FROM docs") == [{"count": 2}]
    assert answer(db, "SELECT count(*) AS n FROM docs") == [{"n": 0}]


def test_an_update_that_fails_changes_nothing(db: fts.Database) -> None:
    db.sql("CREATE TABLE nn (a INT NOT NULL, b INT) AS VALUES (1, 1)")
    version = db.manifest.version
    with pytest.raises(fts.EngineError, match="non-nullable"):
        db.sql("UPDATE nn SET a = NULL")
    assert db.manifest.version == version
    assert answer(db, "SELECT * FROM nn") == [{"a": 1, "b": 1}]


def test_create_or_replace_replaces_a_managed_table(db: fts.Database) -> None:
    db.sql("CREATE TABLE t (a INT) AS VALUES (1)")
    db.sql("INSERT INTO t VALUES (2)")  # (a fresh row: it goes with the table it was in)
    db.sql("CREATE OR REPLACE TABLE t (z BIGINT) AS VALUES (9)")
    assert answer(db, "SELECT * FROM t") == [{"z": 9}]
    assert db.table_names() == ["t"]
    with pytest.raises(fts.EngineError, match="already exists"):
        db.sql("CREATE TABLE t (q INT)")
    assert answer(db, "CREATE TABLE IF NOT EXISTS t (q INT)") == []


def test_names_datafusion_takes(db: fts.Database) -> None:
    db.sql('CREATE TABLE "foo.bar.baz" AS VALUES (8, 9)')
    db.sql('CREATE TABLE "Mixed Case" (v INT) AS VALUES (1)')
    assert answer(db, 'SELECT * FROM "foo.bar.baz"') == [{"column1": 8, "column2": 9}]
    assert answer(db, 'SELECT v FROM "Mixed Case"') == [{"v": 1}]
    assert sorted(db.table_names()) == ["Mixed Case", "foo.bar.baz"]
    db.sql('DROP TABLE "foo.bar.baz"')
    assert db.table_names() == ["Mixed Case"]


def test_drop_view_does_not_drop_a_managed_table(db: fts.Database) -> None:
    db.sql("CREATE TABLE t (a INT) AS VALUES (1)")
    with pytest.raises(fts.FtsError):
        db.sql("DROP VIEW t")
    assert answer(db, "SELECT * FROM t") == [{"a": 1}]


def test_a_plain_statement_reaches_datafusion_as_written() -> None:
    """Text sqlglot cannot parse, or would write back otherwise, is DataFusion's own."""
    ctx = datafusion.SessionContext()
    db = fts.connect(ctx=ctx)
    for sql in ("EXPLAIN VALUES ('1'::float)", "SELECT * FROM generate_series(1, 3)",
                "SELECT median(DISTINCT column1) FROM (VALUES (1.0), (2.0), (4.0))",
                "SELECT CAST(500 AS DECIMAL(10, -2)) AS d", "EXPLAIN FORMAT TREE SELECT 1"):
        assert db.sql(sql).to_pylist() == ctx.sql(sql).to_pylist(), sql


def test_schemas_made_by_sql_hold_tables() -> None:
    db = fts.connect()
    db.sql("CREATE SCHEMA s2")
    db.sql("CREATE TABLE s2.y (a INT)")
    assert answer(db, "INSERT INTO s2.y VALUES (1)") == [{"count": 1}]
    assert answer(db, "SELECT * FROM s2.y") == [{"a": 1}]
    assert db.table_names() == []  # (another schema's table is DataFusion's own)
    assert answer(db, "SELECT schema_owner FROM information_schema.schemata WHERE schema_name = 'public'") == [
        {"schema_owner": None}]


def test_a_dictionary_column_holding_a_null_is_stored_and_read_back_as_declared(db: fts.Database) -> None:
    """aggregate.slt:6452: Arrow's Parquet writer refuses such a dictionary; a directory
    stores its values, which DataFusion reads back as the dictionary declared."""
    db.sql("CREATE TABLE d AS SELECT arrow_cast(NULL, 'Dictionary(Int32, Utf8)') AS d FROM (VALUES (1), (2))")
    db.sql("INSERT INTO d VALUES ('x')")
    assert answer(db, "SELECT count(DISTINCT d) AS n FROM d") == [{"n": 1}]
    assert answer(db, "SELECT DISTINCT arrow_typeof(d) AS t FROM d") == [{"t": "Dictionary(Int32, Utf8)"}]
    assert answer(db, "DESCRIBE d")[0]["data_type"] == "Dictionary(Int32, Utf8)"


def test_dictionaries_of_numbers_and_in_search_results_keep_their_declared_type(db: fts.Database) -> None:
    """aggregate.slt:6559 and case.slt:863: Arrow's cast makes no dictionary of plain
    values, so the stored values are encoded again; a search returns the column as
    declared too."""
    db.sql("CREATE TABLE v AS SELECT arrow_cast(x, 'Dictionary(Int64, Int32)') AS x, "
           "arrow_cast(CAST(x AS DOUBLE), 'Dictionary(Int32, Float32)') AS f, 'w' || x AS body "
           "FROM (VALUES (1), (2), (3), (1), (NULL)) t(x)")
    assert answer(db, "SELECT sum(x) AS s, max(f) AS m FROM v") == [{"s": 7, "m": 3.0}]
    assert answer(db, "SELECT DISTINCT arrow_typeof(x) AS a, arrow_typeof(f) AS b FROM v") == [
        {"a": "Dictionary(Int64, Int32)", "b": "Dictionary(Int32, Float32)"}]
    db.sql("CREATE FULLTEXT INDEX ON v (body)")
    found = answer(db, "SELECT x, arrow_typeof(x) AS t FROM v WHERE MATCH(body, 'w1') ORDER BY score() DESC")
    assert found == [{"x": 1, "t": "Dictionary(Int64, Int32)"}] * 2


def _same_as_datafusion(db: fts.Database, statements: list[str],
                        plain: datafusion.SessionContext | None = None) -> datafusion.SessionContext:
    """Each statement answers through ``db.sql`` as on a plain DataFusion session (a new
    one, or ``plain``): the same Arrow table, or an error in both. That session."""
    plain = plain or datafusion.SessionContext()
    for sql in statements:
        try:
            expected = plain.sql(sql).to_arrow_table()
        except Exception:  # (DataFusion's errors have no class of their own in Python)
            with pytest.raises(fts.FtsError):
                db.sql(sql)
            continue
        assert db.sql(sql).to_arrow_table() == expected, sql
    return plain


def test_a_dictionary_of_dictionaries_is_stored_and_read_back_as_declared(db: fts.Database) -> None:
    """issue 41: such a column was refused ("cannot store dictionary<...> as string"):
    pyarrow makes no empty array of that type from Python values, which the check of a
    write's types and an empty table's batch were made of."""
    nested = "arrow_cast(arrow_cast(x, 'Dictionary(UInt32, Utf8)'), 'Dictionary(Int32, Dictionary(UInt32, Utf8))')"
    _same_as_datafusion(db, [
        f"CREATE TABLE d AS SELECT {nested} AS c FROM (VALUES ('foo'), ('bar'), ('foo')) t(x)",
        "SELECT c, arrow_typeof(c) AS t FROM d ORDER BY c",
        f"CREATE TABLE e AS SELECT {nested} AS c FROM (VALUES ('foo')) t(x) WHERE false",
        "SELECT c FROM e", "INSERT INTO e SELECT c FROM d", "SELECT c, arrow_typeof(c) AS t FROM e ORDER BY c",
        "INSERT INTO e VALUES ('baz')",  # (an error in both: DataFusion casts no literal to it)
        "SELECT c FROM e ORDER BY c",
    ])


@pytest.mark.parametrize("held", [True, False], ids=["held", "viewed"])
def test_a_run_end_encoded_column_is_stored_and_read_back_as_declared(held: bool, tmp_path: Path) -> None:
    """issue 41: in a directory such a column was refused ("cannot be stored as Parquet");
    its values are stored and encoded again when read: into DataFusion's in-memory table,
    by DataFusion's Parquet reader (a table too large to be held), after a reopen, and in
    a search's columns."""
    config = {"fts.memory_table_bytes": 1 << 30 if held else 0}
    ree = "arrow_cast(k, 'RunEndEncoded(\"run_ends\": non-null Int32, \"values\": Utf8)')"
    reads = ["SELECT k, arrow_typeof(k) AS t, v FROM s ORDER BY v", "SELECT k, count(*) AS n FROM s GROUP BY k ORDER BY k"]
    db = fts.connect(tmp_path / "db", config=config)
    plain = _same_as_datafusion(db, [
        f"CREATE TABLE s AS SELECT {ree} AS k, v, b FROM (VALUES ('a', 1, 'red fox'), ('a', 2, 'blue'), "
        "('b', 3, 'red')) AS t(k, v, b)", *reads, "INSERT INTO s VALUES ('c', 4, 'red sky')", *reads])
    _same_as_datafusion(fts.connect(tmp_path / "db", config=config), reads, plain)
    db.sql("CREATE FULLTEXT INDEX ON s (b)")
    found = db.sql("SELECT k, arrow_typeof(k) AS t, v FROM s WHERE MATCH(b, 'red') ORDER BY v").to_arrow_table()
    assert found == plain.sql("SELECT k, arrow_typeof(k) AS t, v FROM s WHERE b LIKE '%red%' ORDER BY v").to_arrow_table()


@pytest.mark.parametrize("where", ["memory", "held", "viewed"])
def test_list_views_and_lists_of_nulls_are_stored_and_read_back_as_declared(where: str, tmp_path: Path) -> None:
    """list_view.slt:25, min_max/init_data.slt.part:68 (issue 41): Arrow's cast took the
    offsets of DataFusion's list views (one a row) as a list's (one more), and a cast or
    view of a list of nulls, even to its own type, made it span more items than it has:
    CREATE TABLE failed. Written, inserted into, read back (in DataFusion's in-memory
    table or by its Parquet reader) as DataFusion answers."""
    db = fts.connect(None if where == "memory" else tmp_path / "db",
                     config={"fts.memory_table_bytes": 0 if where == "viewed" else 1 << 30})
    views = "arrow_cast(make_array(a, b), 'ListView(Int64)') AS l, arrow_cast(make_array(a, b), 'LargeListView(Utf8)') AS s"
    _same_as_datafusion(db, [
        f"CREATE TABLE v AS SELECT id, {views} FROM (VALUES (1, 10, 20), (2, 30, NULL), (3, NULL, NULL)) t(id, a, b)",
        f"INSERT INTO v SELECT 4, {views} FROM (VALUES (5, 6)) t(a, b)", "INSERT INTO v VALUES (5, NULL, NULL)",
        "SELECT * FROM v ORDER BY id", "SELECT l, count(*) AS n FROM v GROUP BY l ORDER BY l",
        "CREATE TABLE n AS VALUES (make_array(NULL, NULL)), (make_array(NULL))", "INSERT INTO n VALUES (make_array())",
        "SELECT column1 FROM n ORDER BY cardinality(column1)", "SELECT min(column1) AS m, max(column1) AS x FROM n",
    ])


def test_an_interval_column_is_kept_in_a_directory_and_one_in_a_list_refused(tmp_path: Path) -> None:
    """Parquet's interval keeps milliseconds: a directory stores an interval's 16 bytes
    and shows them as DataFusion's interval again, after a reopen, in a search's columns,
    whatever fts.memory_table_bytes says. An interval inside a list has no stored form:
    a clear error, and nothing is left behind."""
    sql = "CREATE TABLE t (i INTERVAL, x INT, s VARCHAR) AS VALUES (INTERVAL '5 days 3 nanoseconds', 1, 'alpha')"
    reads = ["SELECT * FROM t", "SELECT i + INTERVAL '1 month' AS j FROM t",
             "SELECT i, x FROM t WHERE MATCH(s, 'alpha')"]
    memory = fts.connect()
    memory.sql(sql)
    memory.sql("INSERT INTO t VALUES (INTERVAL '-2 hours', 2, 'beta alpha')")
    expected = [memory.sql(q).to_arrow_table() for q in reads]
    assert expected[0].schema.field("i").type == pa.month_day_nano_interval()
    db = fts.connect(tmp_path / "db", config={"fts.memory_table_bytes": 0})
    db.sql(sql)
    db.sql("INSERT INTO t VALUES (INTERVAL '-2 hours', 2, 'beta alpha')")
    for again in (db, fts.connect(tmp_path / "db", config={"fts.memory_table_bytes": 0})):
        assert [again.sql(q).to_arrow_table() for q in reads] == expected
    nested = "CREATE TABLE n (i INTERVAL[]) AS VALUES (make_array(INTERVAL '1 day'))"
    with pytest.raises(fts.InvalidArgument, match="cannot be stored as Parquet"):
        db.sql(nested)
    assert db.table_names() == ["t"] and not db.ctx.table_exist("n")


def test_explain_of_a_write_is_datafusions_and_writes_as_datafusion_does(db: fts.Database) -> None:
    """delete.slt:32, update.slt:30 (issue 41: refused before). DataFusion's plan over a
    scratch table standing for the managed one, names and all (a subquery naming the
    table included); DataFusion deletes and updates its own in-memory table as it plans
    an UPDATE or DELETE (``rows_affected``), and EXPLAIN ANALYZE runs an INSERT: the
    managed table is written alike. A plan that fails writes nothing. (Not a DELETE whose
    WHERE holds a subquery: DataFusion 55 deletes every row of its own table then,
    docs/sqllogictest.md; of a managed table, those the WHERE selects.)"""
    reads = ["SELECT * FROM t ORDER BY a"]
    _same_as_datafusion(db, [
        "CREATE TABLE t (a INT, b VARCHAR DEFAULT 'x')", "CREATE TABLE u (a INT, b VARCHAR)",
        "INSERT INTO t VALUES (1, 'p'), (2, 'q'), (3, 'r')", "INSERT INTO u VALUES (1, 'z')",
        "EXPLAIN INSERT INTO t (a) VALUES (4)", *reads,
        "EXPLAIN DELETE FROM t WHERE a = 1", *reads,
        "EXPLAIN UPDATE t SET b = 'w' WHERE a = 2", *reads,
        "EXPLAIN UPDATE t SET b = (SELECT max(b) FROM u WHERE t.a = u.a)", *reads,
        "EXPLAIN FORMAT TREE DELETE FROM t WHERE a = 3", *reads,
        "EXPLAIN DELETE FROM t WHERE nope = 1", *reads,
    ])
    db.sql("EXPLAIN ANALYZE INSERT INTO t (a) VALUES (5)")  # (its timings are its own)
    assert answer(db, "SELECT a, b FROM t ORDER BY a") == [{"a": 2, "b": "w"}, {"a": 5, "b": "x"}]